// event.list: the audit trail, readable by every caller.
import { authedProcedure, router } from "../trpc";
import { listEvents, ListEventsInput } from "../services/list-events";

export const eventRouter = router({
  list: authedProcedure.input(ListEventsInput.optional()).query(({ ctx, input }) => listEvents(ctx, input)),
});
