// A control plane whose own Postgres sits behind a TCP proxy the test controls, so the test can cut
// the database under it (proxy.setMode, or pg.stop()) and give it back. Short database deadlines
// so such a test is quick; what the tests assert does not depend on them.
import { ControlPlane } from "./control-plane";
import { PrivatePostgres } from "./private-postgres";
import { TcpProxy } from "./tcp-proxy";

export interface ProxiedControlPlane {
  pg: PrivatePostgres;
  proxy: TcpProxy;
  cp: ControlPlane;
  /** Lets packets pass again, then stops the control plane, the proxy and Postgres. */
  dispose(): Promise<void>;
}

export async function startProxiedControlPlane(): Promise<ProxiedControlPlane> {
  const pg = await PrivatePostgres.start();
  let proxy: TcpProxy | undefined;
  try {
    proxy = await TcpProxy.forUrl(pg.url).listen();
    const cp = await ControlPlane.start({
      engine: "postgres",
      databaseUrl: proxy.rewrite(pg.url),
      env: { MESH_DB_CONNECT_TIMEOUT_MS: "2000", MESH_DB_STATEMENT_TIMEOUT_MS: "2000" },
    });
    const started = proxy;
    return {
      pg,
      proxy: started,
      cp,
      async dispose() {
        started.setMode("pass");
        await cp.dispose();
        await started.close();
        await pg.dispose();
      },
    };
  } catch (err) {
    // What started is stopped here: the caller has nothing to dispose.
    await proxy?.close();
    await pg.dispose();
    throw err;
  }
}
