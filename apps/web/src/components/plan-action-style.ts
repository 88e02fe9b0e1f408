// How a planned change to a resource is marked in every plan (removals stand out).
export const PLAN_ACTION_STYLE = {
  create: "bg-emerald-100 text-emerald-800",
  update: "bg-sky-100 text-sky-800",
  adopt: "bg-slate-100 text-slate-800",
  unchanged: "bg-slate-50 text-slate-600",
  remove: "bg-rose-600 text-white",
} as const;
