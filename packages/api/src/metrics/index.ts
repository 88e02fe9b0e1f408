export { metrics, setNodeStateCounts, setNodeHealthCounts, type Metrics } from "./metrics";
export { fleetFigures, nodesPerState, FLEET_FIGURES_TTL_MS } from "./fleet-figures";
