// Size limits shared by both sides of every boundary. One place, so the host and
// the control plane refuse the same things.
export const LIMITS = {
  id: 128,
  name: 128,
  path: 4096,
  label: 63,
  labelValue: 256,
  labels: 64,
  fileContent: 256 * 1024,
  resources: 5000,
  resourcesPerRole: 2000,
  message: 1024,
  packages: 20000,
  units: 5000,
  ports: 2000,
  mounts: 500,
  reportErrors: 5000,
  /** Largest frame a host accepts (declarations carry file contents). */
  frameBytes: 4 * 1024 * 1024,
  /** Largest frame the gateway accepts from a host (reports carry digests only). */
  hostFrameBytes: 1024 * 1024,
  enrolBodyBytes: 2 * 1024 * 1024,
} as const;
