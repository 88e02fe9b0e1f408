export * from "./schema/index";
export * from "./client";
export * from "./bus";
export * from "./migrate";
export * from "./data-dir-lock";
