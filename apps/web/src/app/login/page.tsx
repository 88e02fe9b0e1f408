// The login form: user name (the first admin is `admin`) and password.
export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const { error } = await searchParams;
  const field = "w-full rounded-md border border-slate-300 px-3 py-2";
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <form action="/api/auth/login" method="post" className="w-full max-w-sm space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="text-xl font-semibold">Log in to Mesh</h1>
        <p className="text-sm text-slate-700">
          The first admin is <span className="font-mono">admin</span>, with the password set by MESH_ADMIN_PASSWORD or printed by the control plane at its first
          start.
        </p>
        <div className="space-y-1">
          <label htmlFor="name" className="block text-sm font-medium">
            User name
          </label>
          <input id="name" name="name" type="text" defaultValue="admin" required autoComplete="username" className={field} />
        </div>
        <div className="space-y-1">
          <label htmlFor="password" className="block text-sm font-medium">
            Password
          </label>
          {/* biome-ignore lint/a11y/noAutofocus: the page's one field; a person comes here to type the password */}
          <input id="password" name="password" type="password" required autoFocus autoComplete="current-password" className={field} />
        </div>
        {error && (
          <p role="alert" className="text-sm text-rose-700">
            {error === "limited" ? "Too many attempts: wait a few minutes." : "Wrong password."}
          </p>
        )}
        <button
          type="submit"
          className="w-full rounded-md bg-slate-900 px-4 py-2 text-sm font-medium text-white hover:bg-slate-700 focus-visible:ring-2 focus-visible:ring-sky-500"
        >
          Log in
        </button>
      </form>
    </main>
  );
}
