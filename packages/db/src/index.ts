export * from "./schema/index";
export * from "./client";
export * from "./bus";
export * from "./deadlines";
export * from "./unreachable";
export * from "./rows";
