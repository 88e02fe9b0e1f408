// Types for the part of fs-native-extensions (no types of its own) that the data-dir lock uses.
declare module "fs-native-extensions" {
  /** An exclusive (default) or shared lock on the open file `fd` without waiting: false when another holds it. */
  export function tryLock(fd: number, opts?: { shared?: boolean }): boolean;
  export function unlock(fd: number): void;
}
