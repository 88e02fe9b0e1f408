// Every resource type the host knows, by name. A new type joins here and in
// the protocol's Resource union.
import type { Resource, ResourceType } from "@mesh/protocol";
import { directoryProvider } from "./directory";
import { fileProvider } from "./file";
import type { ResourceProvider } from "./provider";

const PROVIDERS: Record<ResourceType, ResourceProvider> = {
  file: fileProvider as ResourceProvider,
  directory: directoryProvider as ResourceProvider,
};

export function providerFor(type: ResourceType): ResourceProvider<Resource> {
  return PROVIDERS[type];
}
