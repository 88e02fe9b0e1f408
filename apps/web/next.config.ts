import type { NextConfig } from "next";

const config: NextConfig = {
  // The server entry owns the one database; routes must share its copies of these.
  serverExternalPackages: ["@electric-sql/pglite", "drizzle-orm", "postgres", "pino", "ws", "nats"],
  transpilePackages: ["@mesh/api", "@mesh/db", "@mesh/protocol"],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
