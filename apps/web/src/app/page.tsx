// Fleet: the first page is rendered on the server (fast first paint), then the
// client view polls for changes.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { FleetView, type FleetCounts, type FleetList } from "@/components/fleet/fleet-view";
import { PAGE_SIZE } from "@/components/fleet/fleet-paging";
import { asSent } from "@/server/as-sent";

export const dynamic = "force-dynamic";

export default async function FleetPage() {
  const { api, me, isAdmin } = await requireSession();
  const [initialList, initialCounts] = await Promise.all([api.node.list({ limit: PAGE_SIZE, offset: 0, sort: "name", order: "asc" }), api.node.counts()]);
  return (
    <Shell me={me}>
      <FleetView initialList={asSent<FleetList>(initialList)} initialCounts={asSent<FleetCounts>(initialCounts)} canEdit={isAdmin} />
    </Shell>
  );
}
