// event.list: the audit trail, readable by every caller (a role change's content diff by admins only).
import { authedProcedure, router } from "../trpc";
import { EventExport, EventPage } from "./schemas/event";
import { EventFilter, exportEvents, listEvents, ListEventsInput } from "../services/list-events";
import { seesContent } from "../services/redact-content";

export const eventRouter = router({
  list: authedProcedure
    .meta({
      description:
        "The audit trail, newest first, a page at a time (pass nextBefore as before for the next page), filtered by node, actor, action or time. A role change's content diff is shown to admins only.",
    })
    .input(ListEventsInput.optional())
    .output(EventPage)
    .query(({ ctx, input }) => listEvents(ctx, input, { showContent: seesContent(ctx.role) })),
  export: authedProcedure
    .meta({ description: "The same filter as event.list, as CSV: at most 10,000 rows, newest first; truncated says when there were more." })
    .input(EventFilter.optional())
    .output(EventExport)
    .query(({ ctx, input }) => exportEvents(ctx, input ?? {}, { showContent: seesContent(ctx.role) })),
});
