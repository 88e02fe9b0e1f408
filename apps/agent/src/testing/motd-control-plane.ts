// The fake control plane the CLI tests enrol and run a daemon against (it takes the token "good"): a host
// that holds no declaration yet is sent v1, one file /motd saying "hi\n".
import { startControlPlane, type FakeControlPlane } from "../link/fake-control-plane";

export function startMotdControlPlane(): Promise<FakeControlPlane> {
  return startControlPlane(null, (ws, auth) => {
    if (auth.declarationVersion < 1) {
      ws.send(
        JSON.stringify({
          type: "declaration",
          declaration: { version: 1, resources: [{ type: "file", id: "motd", path: "/motd", content: "hi\n", mode: "0600" }] },
        }),
      );
    }
  });
}
