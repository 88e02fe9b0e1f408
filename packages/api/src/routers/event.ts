// event.list: the audit trail, readable by every caller.
import { authedProcedure, router } from "../trpc";
import { EventFilter, exportEvents, listEvents, ListEventsInput } from "../services/list-events";

export const eventRouter = router({
  list: authedProcedure.input(ListEventsInput.optional()).query(({ ctx, input }) => listEvents(ctx, input)),
  /** The same filter as CSV (at most 10,000 rows, newest first; `truncated` says when there were more). */
  export: authedProcedure.input(EventFilter.optional()).query(({ ctx, input }) => exportEvents(ctx, input ?? {})),
});
