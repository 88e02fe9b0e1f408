"use client";
// "Issue token": TTL, labels and uses; the token is shown once, inside the two
// commands a new machine needs, each with a copy button. Once issued, focus moves to the
// install command, so a keyboard or screen-reader user lands on what to copy next.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type Ref } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { CopyButton } from "../copy-button";
import { parseLabels } from "../labels-input";
import { errorMessage } from "../error-message";

const TTLS = [
  { seconds: 900, label: "15 minutes" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86400, label: "1 day" },
  { seconds: 7 * 86400, label: "7 days" },
];

export function IssueTokenForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [ttl, setTtl] = useState(3600);
  const [labelsText, setLabelsText] = useState("");
  const [uses, setUses] = useState(1);
  const create = useMutation(trpc.token.create.mutationOptions({ onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.token.list.queryKey() }) }));
  const labels = parseLabels(labelsText);
  const installCommand = useRef<HTMLElement>(null);
  useEffect(() => {
    if (create.data) installCommand.current?.focus();
  }, [create.data]);
  const field = "rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm";

  return (
    <div className="space-y-4">
      <form
        className="flex flex-wrap items-end gap-3"
        onSubmit={(e) => {
          e.preventDefault();
          if ("labels" in labels) create.mutate({ ttlSeconds: ttl, labels: labels.labels, maxUses: uses });
        }}
      >
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Expires after
          <select value={ttl} onChange={(e) => setTtl(Number(e.target.value))} className={field}>
            {TTLS.map((t) => (
              <option key={t.seconds} value={t.seconds}>
                {t.label}
              </option>
            ))}
          </select>
        </label>
        <label className="flex min-w-56 flex-1 flex-col gap-1 text-xs font-medium text-slate-700">
          Labels for the new nodes
          <input
            value={labelsText}
            onChange={(e) => setLabelsText(e.target.value)}
            placeholder="tier=web, zone=a"
            aria-invalid={"error" in labels}
            aria-describedby="labels-error"
            className={field}
          />
        </label>
        <label className="flex w-24 flex-col gap-1 text-xs font-medium text-slate-700">
          Uses
          <input type="number" min={1} max={10000} value={uses} onChange={(e) => setUses(Math.max(1, Number(e.target.value) || 1))} className={field} />
        </label>
        <Button type="submit" kind="primary" disabled={create.isPending || "error" in labels}>
          {create.isPending ? "Issuing…" : "Issue token"}
        </Button>
      </form>
      {"error" in labels && (
        <p id="labels-error" role="alert" className="text-sm text-rose-700">
          {labels.error}
        </p>
      )}
      {create.isError && (
        <p role="alert" className="text-sm text-rose-700">
          Could not issue a token: {errorMessage(create.error)}
        </p>
      )}
      {create.data && (
        <div className="space-y-3 rounded-md border border-emerald-200 bg-emerald-50 p-4" aria-live="polite">
          <p className="text-sm text-slate-800">
            Token <span className="font-mono">{create.data.id}</span> issued. It is shown only now; it expires{" "}
            <time dateTime={create.data.expiresAt}>{new Date(create.data.expiresAt).toLocaleString("en-GB")}</time>. On the new machine, as root:
          </p>
          <CommandBlock
            step="1. Install (the host this control plane serves; needs `npm run package` on it)"
            text={create.data.installCommand}
            testId="install-command"
            codeRef={installCommand}
          />
          <CommandBlock step="2. Enrol" text={create.data.command} testId="enrol-command" />
        </div>
      )}
    </div>
  );
}

function CommandBlock({ step, text, testId, codeRef }: { step: string; text: string; testId: string; codeRef?: Ref<HTMLElement> }) {
  const name = `${step.slice(3).replace(/ \(.*\)$/, "")} command`;
  return (
    <div>
      <p className="mb-1 text-xs font-semibold text-slate-700">{step}</p>
      <div className="flex items-start gap-2">
        {/* Focusable: it scrolls sideways on a phone, and focus lands here after issuing. A terminal
            stays dark in dark mode: the dark: shades are mirrored back (globals.css). */}
        <code
          ref={codeRef}
          tabIndex={0}
          role="region"
          aria-label={name}
          data-testid={testId}
          className="block flex-1 overflow-x-auto whitespace-pre rounded bg-slate-900 px-3 py-2 font-mono text-sm text-emerald-300 focus:outline-none dark:bg-slate-100 dark:text-emerald-700 focus-visible:ring-2 focus-visible:ring-sky-500"
        >
          {text}
        </code>
        <CopyButton text={text} label={`Copy the ${step.slice(3).toLowerCase()} command`} />
      </div>
    </div>
  );
}
