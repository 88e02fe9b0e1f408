// Every resource type the host knows, by name. A new type joins here and in the
// protocol's Resource union.
import type { Resource, ResourceType } from "@mesh/protocol";
import { directoryProvider } from "./directory";
import { fileProvider } from "./file";
import { hostProvider } from "./host-provider";
import { packageProvider } from "./package-provider";
import type { ResourceProvider } from "./provider";
import { serviceProvider } from "./service-provider";
import { symlinkProvider } from "./symlink";

type ByType = { [T in ResourceType]: ResourceProvider<Extract<Resource, { type: T }>> };

const PROVIDERS: ByType = {
  file: fileProvider,
  directory: directoryProvider,
  symlink: symlinkProvider,
  package: packageProvider,
  service: serviceProvider,
  host: hostProvider,
};

export function providerFor(type: ResourceType): ResourceProvider<Resource> {
  return PROVIDERS[type] as unknown as ResourceProvider<Resource>;
}

/** The subject without its kind: "path:/etc/motd" -> "/etc/motd". */
export function subjectKey(subject: string): string {
  return subject.slice(subject.indexOf(":") + 1);
}
