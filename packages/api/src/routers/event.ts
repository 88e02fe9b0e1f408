// event.list: the audit trail, readable by every caller (a role change's content diff by admins only).
import { authedProcedure, router } from "../trpc";
import { EventExport, EventPage } from "./schemas/event";
import { EventFilter, exportEvents, listEvents, ListEventsInput } from "../services/list-events";
import { seesContent } from "../services/redact-content";

export const eventRouter = router({
  list: authedProcedure.input(ListEventsInput.optional()).output(EventPage).query(({ ctx, input }) => listEvents(ctx, input, { showContent: seesContent(ctx.role) })),
  /** The same filter as CSV (at most 10,000 rows, newest first; `truncated` says when there were more). */
  export: authedProcedure.input(EventFilter.optional()).output(EventExport).query(({ ctx, input }) => exportEvents(ctx, input ?? {}, { showContent: seesContent(ctx.role) })),
});
