// Buttons in three weights, one look everywhere; the danger weight is for
// actions that take something away (retire, revoke).
import type { ComponentProps } from "react";

const KINDS = {
  primary: "bg-slate-900 text-white hover:bg-slate-700",
  secondary: "border border-slate-300 bg-white text-slate-800 hover:bg-slate-100",
  danger: "bg-rose-700 text-white hover:bg-rose-800",
} as const;

export function Button({ kind = "secondary", className = "", ...props }: ComponentProps<"button"> & { kind?: keyof typeof KINDS }) {
  return (
    <button
      type="button"
      {...props}
      className={`inline-flex items-center justify-center rounded-md px-3 py-1.5 text-sm font-medium focus:outline-none focus-visible:ring-2 focus-visible:ring-sky-500 focus-visible:ring-offset-1 disabled:cursor-not-allowed disabled:opacity-50 ${KINDS[kind]} ${className}`}
    />
  );
}
