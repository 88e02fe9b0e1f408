// Tests for the systemd unit-file parser used when the host supervises services itself
// (no systemd as PID 1): syntax, defaults, refusals, specifiers.
import { describe, it, expect } from "vitest";
import { parseUnitFile, type UnitSpec } from "./unit-file";
import { UnitFileError } from "./unit-syntax";

/** Parses a [Service] body (lines joined with "\n") under the unit name web.service. */
const svc = (body: string, unit = "web.service"): UnitSpec => parseUnitFile(unit, `[Service]\n${body}\n`);
const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UnitFileError);
    return (e as Error).message;
  }
  throw new Error("expected a UnitFileError");
};

const CONTROL_PLANE = `[Unit]
Description=Mesh control plane: dashboard, API and agent gateway
After=network-online.target
Wants=network-online.target

[Service]
Type=exec
EnvironmentFile=/etc/mesh/control-plane.env
WorkingDirectory=/opt/mesh/apps/web
ExecStart=/usr/bin/node --import tsx src/server.ts
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`;

describe("parseUnitFile", () => {
  it("fills in systemd's defaults", () => {
    expect(svc("ExecStart=/bin/true")).toEqual({
      unit: "web.service",
      description: null,
      type: "simple",
      execStartPre: [],
      execStart: [{ argv: ["/bin/true"], ignoreFailure: false }],
      execStartPost: [],
      execStop: [],
      environment: {},
      environmentFiles: [],
      workingDirectory: null,
      user: null,
      group: null,
      restart: "no",
      restartMs: 100,
      timeoutStopMs: 90_000,
      killSignal: "SIGTERM",
      killMode: "control-group",
      successExitStatus: [],
      remainAfterExit: false,
      startLimitIntervalMs: 10_000,
      startLimitBurst: 5,
      wantedBy: [],
      requiredBy: [],
      hasInstall: false,
      notEnforced: [],
      ignored: [],
    } satisfies UnitSpec);
  });

  it("parses the control plane's own unit", () => {
    expect(parseUnitFile("mesh-control-plane.service", CONTROL_PLANE)).toEqual({
      unit: "mesh-control-plane.service",
      description: "Mesh control plane: dashboard, API and agent gateway",
      type: "exec",
      execStartPre: [],
      execStart: [{ argv: ["/usr/bin/node", "--import", "tsx", "src/server.ts"], ignoreFailure: false }],
      execStartPost: [],
      execStop: [],
      environment: {},
      environmentFiles: [{ path: "/etc/mesh/control-plane.env", optional: false }],
      workingDirectory: { path: "/opt/mesh/apps/web", optional: false },
      user: null,
      group: null,
      restart: "always",
      restartMs: 2000,
      timeoutStopMs: 90_000,
      killSignal: "SIGTERM",
      killMode: "control-group",
      successExitStatus: [],
      remainAfterExit: false,
      startLimitIntervalMs: 10_000,
      startLimitBurst: 5,
      wantedBy: ["multi-user.target"],
      requiredBy: [],
      hasInstall: true,
      notEnforced: ["Unit.After", "Unit.Wants"],
      ignored: [],
    } satisfies UnitSpec);
  });

  it("reads the remaining directives", () => {
    const s = parseUnitFile(
      "job.service",
      [
        "[Unit]",
        "StartLimitIntervalSec=30",
        "StartLimitBurst=3",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        "ExecStartPre=-/bin/mkdir -p /run/job",
        "ExecStart=/bin/a",
        "ExecStart=/bin/b",
        "ExecStartPost=/bin/c",
        "ExecStop=/bin/d",
        "User=app",
        "Group=app",
        "TimeoutStopSec=5s",
        "KillSignal=INT",
        "KillMode=mixed",
        "SuccessExitStatus=143 SIGTERM 3",
        "Restart=on-failure",
        "[Install]",
        "WantedBy=a.target b.target",
        "WantedBy=c.target",
        "RequiredBy=d.target",
        "Alias=job2.service",
      ].join("\n"),
    );
    expect(s).toMatchObject({
      type: "oneshot",
      remainAfterExit: true,
      startLimitIntervalMs: 30_000,
      startLimitBurst: 3,
      execStartPre: [{ argv: ["/bin/mkdir", "-p", "/run/job"], ignoreFailure: true }],
      execStart: [
        { argv: ["/bin/a"], ignoreFailure: false },
        { argv: ["/bin/b"], ignoreFailure: false },
      ],
      execStartPost: [{ argv: ["/bin/c"] }],
      execStop: [{ argv: ["/bin/d"] }],
      user: "app",
      group: "app",
      timeoutStopMs: 5000,
      killSignal: "SIGINT",
      killMode: "mixed",
      successExitStatus: [143, 3],
      restart: "on-failure",
      wantedBy: ["a.target", "b.target", "c.target"],
      requiredBy: ["d.target"],
      hasInstall: true,
      notEnforced: ["Install.Alias"],
    });
  });

  it.each([
    ["StartLimitInterval=20", { startLimitIntervalMs: 20_000 }],
    ["StartLimitBurst=0", { startLimitBurst: 0 }],
    ["TimeoutSec=infinity", { timeoutStopMs: Infinity }],
    ["TimeoutStopSec=0", { timeoutStopMs: Infinity }],
    ["KillSignal=SIGKILL", { killSignal: "SIGKILL" }],
    ["KillSignal=15", { killSignal: "SIGTERM" }],
    ["Type=notify-reload", { type: "notify" }],
    ["Type=idle", { type: "idle" }],
    ["Restart=on-watchdog", { restart: "no" }],
    ["Restart=on-abort", { restart: "on-abort" }],
    ["RemainAfterExit=on", { remainAfterExit: true }],
    ["RemainAfterExit=0", { remainAfterExit: false }],
    ["RemainAfterExit=TRUE", { remainAfterExit: true }],
    ["WorkingDirectory=-/srv/app", { workingDirectory: { path: "/srv/app", optional: true } }],
    ["User=", { user: null }],
  ])("%s", (line, expected) => {
    expect(svc(`ExecStart=/bin/true\n${line}`)).toMatchObject(expected);
  });

  it("splits command lines with systemd quoting and escapes", () => {
    const argv = (v: string) => svc(`ExecStart=${v}`).execStart[0]!.argv;
    expect(argv(`/bin/echo "a b" 'c d' e\\ f`)).toEqual(["/bin/echo", "a b", "c d", "e f"]);
    expect(argv(`/bin/echo "say \\"hi\\"" 'it\\'s' \\\\ x\\ty\\nz`)).toEqual(["/bin/echo", 'say "hi"', "it's", "\\", "x\ty\nz"]);
    expect(argv(`/bin/echo a"b c"d "" \\x41`)).toEqual(["/bin/echo", "ab cd", "", "A"]);
    expect(argv(`   /bin/echo    spaced\t\ttabs  `)).toEqual(["/bin/echo", "spaced", "tabs"]);
    expect(argv("node server.js")).toEqual(["node", "server.js"]);
  });

  it.each([
    ["-/bin/x", ["/bin/x"], true],
    ["+/bin/x", ["/bin/x"], false],
    ["!/bin/x", ["/bin/x"], false],
    ["!!/bin/x", ["/bin/x"], false],
    ["-+/bin/x", ["/bin/x"], true],
    [":/bin/echo $HOME ${X}", ["/bin/echo", "$$HOME", "$${X}"], false],
  ])("command prefix %s", (value, argv, ignoreFailure) => {
    expect(svc(`ExecStart=${value}`).execStart[0]).toEqual({ argv, ignoreFailure });
  });

  it("joins continuation lines with a space and skips comments inside them", () => {
    const s = svc(["ExecStart=/bin/echo one \\", "  two \\", "# a comment inside", "  three", "Description=x", "Restart=always"].join("\n"));
    expect(s.execStart[0]!.argv).toEqual(["/bin/echo", "one", "two", "three"]);
    expect(s.restart).toBe("always");
    expect(svc("ExecStart=/bin/echo a\\\\\r\nRestart=always").execStart[0]!.argv).toEqual(["/bin/echo", "a\\"]);
    expect(svc("# comment \\\nExecStart=/bin/true").execStart).toHaveLength(1);
  });

  it("resets list-valued keys on an empty assignment", () => {
    const s = parseUnitFile(
      "web.service",
      [
        "[Service]",
        "ExecStart=/bin/a",
        "ExecStart=",
        "ExecStart=/bin/b",
        "ExecStartPre=/bin/p",
        "ExecStartPre=",
        "Environment=A=1",
        "Environment=",
        "Environment=B=2",
        "EnvironmentFile=/a",
        "EnvironmentFile=",
        "EnvironmentFile=-/b",
        "SuccessExitStatus=1",
        "SuccessExitStatus=",
        "[Install]",
        "WantedBy=a.target",
        "WantedBy=",
        "RequiredBy=x.target",
        "RequiredBy=",
      ].join("\n"),
    );
    expect(s).toMatchObject({
      execStart: [{ argv: ["/bin/b"] }],
      execStartPre: [],
      environment: { B: "2" },
      environmentFiles: [{ path: "/b", optional: true }],
      successExitStatus: [],
      wantedBy: [],
      requiredBy: [],
      hasInstall: false,
    });
  });

  it("parses Environment= quoting; later assignments win", () => {
    const s = svc(['Environment="A=1 2" B=3', "Environment=C=\"x y\" 'D=it''s'", "Environment=B=4 E= F=a=b", "ExecStart=/bin/true"].join("\n"));
    expect(s.environment).toEqual({ A: "1 2", B: "4", C: "x y", D: "its", E: "", F: "a=b" });
  });

  it("reads EnvironmentFile= with and without the optional prefix", () => {
    expect(svc("EnvironmentFile=/etc/a.env\nEnvironmentFile=-/etc/%N.env\nExecStart=/bin/true").environmentFiles).toEqual([
      { path: "/etc/a.env", optional: false },
      { path: "/etc/web.env", optional: true },
    ]);
  });

  it("resolves specifiers", () => {
    const s = parseUnitFile("worker@blue.service", "[Service]\nExecStart=/bin/run %n %N %p %i 100%% %%n\nEnvironment=INST=%i\n");
    expect(s.execStart[0]!.argv).toEqual(["/bin/run", "worker@blue.service", "worker@blue", "worker", "blue", "100%", "%n"]);
    expect(s.environment).toEqual({ INST: "blue" });
    expect(svc("ExecStart=/bin/run %p-%i.")).toMatchObject({ execStart: [{ argv: ["/bin/run", "web-."] }] });
  });

  it.each([
    ["5", 5000],
    ["250ms", 250],
    ["1min 30s", 90_000],
    ["1min30s", 90_000],
    ["2h", 7_200_000],
    ["1hr", 3_600_000],
    ["1d", 86_400_000],
    ["1.5s", 1500],
    ["500us", 1],
    ["3 sec", 3000],
    ["2m", 120_000],
    ["0", 0],
  ])("time span RestartSec=%s", (value, ms) => {
    expect(svc(`ExecStart=/bin/true\nRestartSec=${value}`).restartMs).toBe(ms);
  });

  it("records directives it accepts without enforcing, and ones it does not know", () => {
    const s = parseUnitFile(
      "web.service",
      [
        "[Unit]",
        "Documentation=man:x",
        "Requires=db.service",
        "ConditionPathExists=/x",
        "Frobnicate=1",
        "[Service]",
        "ExecStart=/bin/true",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=",
        "ReadWritePaths=/var/lib/x",
        "LimitNOFILE=65536",
        "MemoryMax=1G",
        "PrivateTmp=no",
        "Bogus=2",
        "[Install]",
        "Also=other.service",
        "[X-Mesh]",
        "Whatever=1",
        "[Socket]",
        "ListenStream=80",
      ].join("\n"),
    );
    expect(s.notEnforced).toEqual([
      "Unit.Documentation",
      "Unit.Requires",
      "Unit.ConditionPathExists",
      "Service.ProtectSystem",
      "Service.PrivateTmp",
      "Service.NoNewPrivileges",
      "Service.CapabilityBoundingSet",
      "Service.ReadWritePaths",
      "Service.LimitNOFILE",
      "Service.MemoryMax",
      "Install.Also",
    ]);
    expect(s.ignored).toEqual(["Unit.Frobnicate", "Service.Bogus", "Socket.ListenStream"]);
    expect(s.hasInstall).toBe(true);
  });
});

describe("parseUnitFile refusals", () => {
  it.each([
    ["Type=forking", 2, "Type=forking is not supported without systemd (the host supervises the main process itself)"],
    ["Type=dbus", 2, "Type=dbus is not supported"],
    ["Type=weird", 2, "unknown Type=weird"],
    ["PIDFile=/run/x.pid", 2, "PIDFile= is not supported without systemd"],
    ["BusName=org.x", 2, "BusName= is not supported"],
    ["Sockets=x.socket", 2, "Sockets= is not supported"],
    ["Restart=sometimes", 2, "unknown Restart=sometimes"],
    ["ExecStart=/bin/other", 3, "a second ExecStart= is only allowed with Type=oneshot"],
    ["ExecStartPre=@/bin/x fake", 2, "the @ prefix"],
    ["ExecStartPre=bin/x", 2, "must be an absolute path or a bare program name"],
    ["ExecStartPre=-", 2, "empty command"],
    ["ExecStartPre=/bin/x %h", 2, "specifier %h is not supported"],
    ["ExecStartPre=/bin/x 100%", 2, "lone %"],
    ['ExecStartPre=/bin/x "open', 2, 'unterminated " quote'],
    ["ExecStartPre=/bin/x \\q", 2, "unsupported escape \\q"],
    ["Environment=1A=x", 2, 'Environment= assignment "1A=x"'],
    ["Environment=NOEQUALS", 2, "is not KEY=VALUE"],
    ["EnvironmentFile=relative.env", 2, "EnvironmentFile=relative.env is not an absolute path"],
    ["WorkingDirectory=~", 2, "WorkingDirectory=~ is not supported"],
    ["WorkingDirectory=-~", 2, "WorkingDirectory=~ is not supported"],
    ["WorkingDirectory=srv", 2, "is not an absolute path"],
    ["KillMode=none", 2, "KillMode=none is not supported without systemd"],
    ["KillMode=all", 2, "unknown KillMode=all"],
    ["KillSignal=SIGNOPE", 2, "KillSignal=SIGNOPE is not a known signal"],
    ["RemainAfterExit=maybe", 2, "RemainAfterExit=maybe is not a boolean"],
    ["RestartSec=infinity", 2, "RestartSec=infinity is not allowed"],
    ["RestartSec=5 parsecs", 2, 'unknown time unit "parsecs"'],
    ["TimeoutStopSec=-1", 2, "TimeoutStopSec=-1 is not a valid time span"],
    ["TimeoutStopSec=", 2, "is not a valid time span"],
    ["StartLimitBurst=many", 2, "StartLimitBurst=many is not a non-negative integer"],
    ["SuccessExitStatus=300", 2, "neither an exit status nor a signal"],
    ["just words", 2, "expected Key=Value"],
    ["Bad Key=1", 2, 'invalid key "Bad Key"'],
  ])("%s", (line, lineNo, message) => {
    const msg = refusal(() => parseUnitFile("web.service", `[Service]\n${line}\nExecStart=/bin/true\n`));
    expect(msg).toContain(`web.service line ${lineNo}: `);
    expect(msg).toContain(message);
  });

  it("names the line of the second ExecStart and the [Service] header for a missing one", () => {
    expect(refusal(() => svc("ExecStart=/bin/a\nExecStart=/bin/b"))).toBe(
      "web.service line 3: a second ExecStart= is only allowed with Type=oneshot (Type=simple)",
    );
    expect(refusal(() => parseUnitFile("web.service", "[Unit]\nDescription=x\n\n[Service]\nRestart=always\n"))).toBe(
      "web.service line 4: no ExecStart= in [Service]",
    );
    expect(refusal(() => svc("Type=oneshot"))).toContain("no ExecStart=");
    expect(refusal(() => svc("Type=oneshot\nExecStart=/bin/a\nRestart=always"))).toBe("web.service line 4: Restart=always is not allowed for Type=oneshot");
  });

  it("reports the first physical line of a continued line", () => {
    expect(refusal(() => svc("ExecStart=/bin/true\nType=\\\n  forking"))).toMatch(/^web\.service line 3: Type=forking/);
  });

  it.each([
    ["web.timer", "[Service]\nExecStart=/bin/true", "web.timer: only .service units can be run without systemd"],
    ["web.socket", "[Socket]\nListenStream=80", "web.socket: only .service units can be run without systemd"],
    [".service", "[Service]\nExecStart=/bin/true", ".service: not a valid unit name"],
    ["web.service", "[Unit]\nDescription=x\n", "web.service: no [Service] section"],
    ["web.service", "Description=x\n[Service]", "web.service line 1: Description= appears before any section"],
    ["web.service", "[Service\nExecStart=/bin/true", "web.service line 1: malformed section header"],
  ])("%s: %s", (unit, text, message) => {
    expect(refusal(() => parseUnitFile(unit, text))).toContain(message);
  });

  it("refuses oversized files and lines", () => {
    const big = `[Service]\nExecStart=/bin/true\n${"# padding padding padding\n".repeat(11_000)}`;
    expect(refusal(() => parseUnitFile("web.service", big))).toMatch(/^web\.service: unit file is \d+ bytes, over the 256 KiB limit$/);
    const long = `[Service]\nExecStart=/bin/true\nDescription=${"x".repeat(64 * 1024)}\n`;
    expect(refusal(() => parseUnitFile("web.service", long))).toBe("web.service line 3: line is longer than 64 KiB");
    const continued = `[Service]\nExecStart=/bin/true\n${`Description=${"x".repeat(40_000)}\\\n`}${"y".repeat(40_000)}\n`;
    expect(refusal(() => parseUnitFile("web.service", continued))).toContain("line 3: line (with continuations) is longer than 64 KiB");
  });
});
