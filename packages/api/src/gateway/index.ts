export { createGateway, type Gateway, type GatewayOptions } from "./gateway";
