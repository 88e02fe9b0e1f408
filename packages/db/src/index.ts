export * from "./schema/index";
export * from "./client";
export * from "./bus";
