// The one way a page says the database cannot answer. Next passes a server error's own `digest`
// to the error page (and nothing else of it, in production), so the server marks the error with this.
export const DATABASE_UNAVAILABLE_DIGEST = "MESH_DATABASE_UNAVAILABLE";

export const DATABASE_UNAVAILABLE_TEXT = "The database is unreachable. The control plane keeps trying; this page works again as soon as it answers.";
