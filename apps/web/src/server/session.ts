// What every dashboard page starts with: a tRPC caller for the logged-in user
// (or the login page) and who that user is, so the page can hide what a viewer cannot do.
import { dashboardCaller } from "./caller";

export async function requireSession() {
  const api = await dashboardCaller();
  const me = await api.user.me();
  return { api, me, isAdmin: me.role === "admin" };
}
