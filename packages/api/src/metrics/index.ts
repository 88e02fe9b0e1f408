export { metrics, setNodeStateCounts, setNodeHealthCounts, type Metrics } from "./metrics";
export { fleetFigures, FLEET_FIGURES_TTL_MS } from "./fleet-figures";
