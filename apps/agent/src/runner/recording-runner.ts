// A Runner for unit tests: records every argv and answers from a script of canned
// results, so a test asserts exactly what would have run without running it.
import type { RunOptions, RunResult, Runner } from "./runner";

export interface ScriptedAnswer {
  /** The calls this answers: those whose argv starts with these elements, or that the predicate accepts. */
  match: string[] | ((argv: string[]) => boolean);
  /** What the program "did"; unset fields mean exit 0 with no output. */
  result?: Partial<RunResult>;
  /** Answer as a program that could not be started (the message of the rejection). */
  error?: string;
  /** Answer every matching call; otherwise the answer is used once and the next matching one takes over. */
  repeat?: boolean;
}

export interface RecordedCall {
  argv: string[];
  opts: RunOptions;
}

export class RecordingRunner implements Runner {
  readonly calls: RecordedCall[] = [];
  private readonly script: { answer: ScriptedAnswer; used: boolean }[];

  /** `otherwise` answers a call no script entry matches; without it such a call rejects, so a test sees it. */
  constructor(
    script: ScriptedAnswer[] = [],
    private readonly otherwise?: Partial<RunResult>,
  ) {
    this.script = script.map((answer) => ({ answer, used: false }));
  }

  /** Add answers after construction (they match after the earlier ones). */
  answer(...answers: ScriptedAnswer[]): this {
    this.script.push(...answers.map((answer) => ({ answer, used: false })));
    return this;
  }

  /** Every argv that ran, in order. */
  get argvs(): string[][] {
    return this.calls.map((c) => c.argv);
  }

  async run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ argv: [...argv], opts });
    const entry = this.script.find((e) => !e.used && matches(e.answer.match, argv));
    if (!entry) {
      if (this.otherwise) return complete(this.otherwise);
      throw new Error(`RecordingRunner: no scripted answer for \`${argv.join(" ")}\``);
    }
    if (!entry.answer.repeat) entry.used = true;
    if (entry.answer.error !== undefined) throw new Error(entry.answer.error);
    return complete(entry.answer.result ?? {});
  }
}

function matches(match: ScriptedAnswer["match"], argv: string[]): boolean {
  if (typeof match === "function") return match(argv);
  return match.length <= argv.length && match.every((part, i) => argv[i] === part);
}

function complete(partial: Partial<RunResult>): RunResult {
  return { code: 0, stdout: "", stderr: "", signal: null, timedOut: false, ...partial };
}
