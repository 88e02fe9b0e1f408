// Fleet: the first page is rendered on the server (fast first paint), then the
// client view polls for changes. The view (filters, sort, page) comes from the URL.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { FleetView, type FleetCounts, type FleetList } from "@/components/fleet/fleet-view";
import { PAGE_SIZE } from "@/components/fleet/fleet-paging";
import { viewFromParams } from "@/components/fleet/fleet-url";
import { asSent } from "@/server/as-sent";

export const dynamic = "force-dynamic";

export default async function FleetPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { api, me, isAdmin } = await requireSession();
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(await searchParams)) if (typeof v === "string") query.set(k, v);
  const initialView = viewFromParams(query);
  const [initialList, initialCounts] = await Promise.all([api.node.list({ limit: PAGE_SIZE, offset: 0, sort: "name", order: "asc" }), api.node.counts()]);
  return (
    <Shell me={me}>
      <FleetView initialList={asSent<FleetList>(initialList)} initialCounts={asSent<FleetCounts>(initialCounts)} initialView={initialView} canEdit={isAdmin} />
    </Shell>
  );
}
