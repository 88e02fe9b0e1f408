export * from "./tokens";
export * from "./nodes";
export * from "./roles";
export * from "./declarations";
export * from "./reports";
export * from "./events";
export * from "./auth";
