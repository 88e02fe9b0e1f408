// Shared by the server page and the client view: a "use client" module's
// constants arrive on the server as client references, not values.
export const PAGE_SIZE = 50;
export const POLL_MS = 2000;
