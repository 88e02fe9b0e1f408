// What only the server entry needs at start-up: migrations and the data-dir lock.
export * from "./migrate";
export * from "./data-dir-lock";
export * from "./data-dir-privacy";
