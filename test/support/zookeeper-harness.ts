// Test-only: runs real ZooKeeper servers (the Debian install, DESIGN §7) as child processes.
//
// `ZooKeeperHarness.start({ servers: 1 | 3 })` writes a zoo.cfg per server in a temporary directory (its
// own dataDir with a `myid`, free ports from `freePort`, tickTime 500, small initLimit/syncLimit,
// admin.enableServer=false, the four-letter words whitelisted, and for an ensemble the same
// `server.N=127.0.0.1:<peer>:<election>` lines), starts them with QuorumPeerMain, and waits until each
// answers `srvr` (and, for an ensemble, until one is the leader). `connectString` lists every server;
// `stop(i, signal)` / `start(i)` stop and restart one server (SIGSTOP is undone by start with SIGCONT);
// `logTail(i)` gives the last lines a server printed, for failure messages; `expireSession(id, password)`
// ends a client's session from another connection (ZooKeeper's way to force an expiry); `close()` kills
// what it started and removes the directory (also at process exit). Every wait is bounded.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  findZooKeeper,
  type ServerStatus,
  serverStatus,
  type ZooKeeperInstall,
  zooCfgText,
  zooKeeperServerArgv,
} from "../../src/cli/zookeeper/zookeeper-command.js";
import { freePort, sleep } from "./broker-harness.js";

/** JVM options that start a small server quickly. */
const TEST_JVM_OPTIONS = ["-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"];
const LOG_LINES_KEPT = 400;

const children = new Set<ChildProcess>();
const roots = new Set<string>();
process.once("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

export interface ZooKeeperHarnessOptions {
  readonly servers?: 1 | 3;
  readonly tickTime?: number;
  /** Bound on each wait for a server to serve (default 30 s). */
  readonly startTimeoutMs?: number;
}

interface Server {
  readonly id: number;
  readonly clientPort: number;
  readonly dataDir: string;
  readonly configFile: string;
  child: ChildProcess | undefined;
  exited: Promise<void> | undefined;
  suspended: boolean;
  readonly lines: string[];
}

export class ZooKeeperHarness {
  readonly host = "127.0.0.1";
  private readonly servers: Server[] = [];
  private closed = false;

  private constructor(
    readonly root: string,
    private readonly install: ZooKeeperInstall,
    private readonly startTimeoutMs: number,
  ) {}

  /** Starts a standalone server or a 3-server ensemble and waits until it serves. */
  static async start(options: ZooKeeperHarnessOptions = {}): Promise<ZooKeeperHarness> {
    const install = findZooKeeper();
    const root = mkdtempSync(join(tmpdir(), "tributary-zk-"));
    roots.add(root);
    const h = new ZooKeeperHarness(root, install, options.startTimeoutMs ?? 30_000);
    try {
      await h.configure(options.servers ?? 1, options.tickTime ?? 500);
      for (let i = 0; i < h.servers.length; i++) h.launch(i);
      for (let i = 0; i < h.servers.length; i++) await h.waitServing(i);
      if (h.servers.length > 1) await h.waitForLeader();
    } catch (e) {
      await h.close();
      throw e;
    }
    return h;
  }

  private async configure(count: number, tickTime: number): Promise<void> {
    const ports: Array<{ client: number; peer: number; election: number }> = [];
    const taken = new Set<number>();
    const pick = async (): Promise<number> => {
      for (;;) {
        const p = await freePort();
        if (!taken.has(p)) {
          taken.add(p);
          return p;
        }
      }
    };
    for (let i = 0; i < count; i++)
      ports.push({ client: await pick(), peer: await pick(), election: await pick() });
    for (let i = 0; i < count; i++) {
      const id = i + 1;
      const dataDir = join(this.root, `server${id}`, "data");
      mkdirSync(dataDir, { recursive: true });
      const settings: Record<string, string | number> = {
        tickTime,
        initLimit: 10,
        syncLimit: 5,
        dataDir,
        clientPort: ports[i].client,
        clientPortAddress: this.host,
        maxClientCnxns: 0,
        // A test that asks for a long session gets it (the default cap is 20 ticks = 10 s here).
        maxSessionTimeout: 60_000,
        "admin.enableServer": "false",
      };
      if (count > 1) {
        writeFileSync(join(dataDir, "myid"), `${id}\n`);
        settings.cnxTimeout = 1000;
        for (let j = 0; j < count; j++) {
          settings[`server.${j + 1}`] = `${this.host}:${ports[j].peer}:${ports[j].election}`;
        }
      }
      const configFile = join(this.root, `server${id}`, "zoo.cfg");
      writeFileSync(configFile, zooCfgText(settings));
      this.servers.push({
        id,
        clientPort: ports[i].client,
        dataDir,
        configFile,
        child: undefined,
        exited: undefined,
        suspended: false,
        lines: [],
      });
    }
  }

  /** `127.0.0.1:p1,127.0.0.1:p2,...` (every server). */
  get connectString(): string {
    return this.servers.map((s) => `${this.host}:${s.clientPort}`).join(",");
  }

  /** One server's `host:port`. */
  address(i: number): string {
    return `${this.host}:${this.server(i).clientPort}`;
  }

  get size(): number {
    return this.servers.length;
  }

  isRunning(i: number): boolean {
    const s = this.server(i);
    return s.child !== undefined && s.child.exitCode === null && s.child.signalCode === null;
  }

  private server(i: number): Server {
    const s = this.servers[i];
    if (!s) throw new Error(`no ZooKeeper server ${i} (there are ${this.servers.length})`);
    return s;
  }

  private launch(i: number): void {
    const s = this.server(i);
    s.lines.push(`=== start of server ${s.id} ===`);
    const argv = zooKeeperServerArgv(this.install, s.configFile, {
      jvmOptions: TEST_JVM_OPTIONS,
      logDir: join(this.root, `server${s.id}`),
    });
    const child = spawn(this.install.java, argv, { stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    s.child = child;
    s.suspended = false;
    const keep = (d: Buffer): void => {
      for (const line of d.toString("utf8").split("\n")) if (line !== "") s.lines.push(line);
      if (s.lines.length > LOG_LINES_KEPT) s.lines.splice(0, s.lines.length - LOG_LINES_KEPT);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    s.exited = new Promise<void>((resolve) => {
      child.once("error", (e) => {
        s.lines.push(`[harness] cannot start java: ${e.message}`);
        children.delete(child);
        resolve();
      });
      child.once("exit", (code, signal) => {
        s.lines.push(`[harness] server ${s.id} exited (${code ?? signal})`);
        children.delete(child);
        resolve();
      });
    });
  }

  /** The server's `srvr` status, or undefined when it does not serve. */
  status(i: number): Promise<ServerStatus | undefined> {
    return serverStatus(this.host, this.server(i).clientPort, 1000);
  }

  private async waitServing(i: number): Promise<ServerStatus> {
    const deadline = Date.now() + this.startTimeoutMs;
    for (;;) {
      if (!this.isRunning(i))
        throw new Error(`ZooKeeper server ${i + 1} exited while starting\n${this.logTail(i)}`);
      const st = await this.status(i);
      if (st) return st;
      if (Date.now() > deadline) {
        throw new Error(
          `ZooKeeper server ${i + 1} did not serve within ${this.startTimeoutMs} ms\n${this.logTail(i)}`,
        );
      }
      await sleep(100);
    }
  }

  /** Waits until a running server is the leader; its index. */
  async waitForLeader(timeoutMs = this.startTimeoutMs): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = 0; i < this.servers.length; i++) {
        if (this.isRunning(i) && !this.server(i).suspended && (await this.status(i))?.mode === "leader")
          return i;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `no ZooKeeper leader within ${timeoutMs} ms\n${this.servers.map((_, i) => this.logTail(i, 20)).join("\n")}`,
        );
      }
      await sleep(100);
    }
  }

  /**
   * Stops server `i` with `signal` (SIGKILL by default) and waits for its exit; SIGSTOP only suspends it
   * (start(i) resumes it).
   */
  async stop(i: number, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const s = this.server(i);
    if (!this.isRunning(i)) return;
    if (signal === "SIGSTOP") {
      s.child?.kill("SIGSTOP");
      s.suspended = true;
      return;
    }
    if (s.suspended) s.child?.kill("SIGCONT");
    s.child?.kill(signal);
    const timer = setTimeout(() => s.child?.kill("SIGKILL"), 10_000);
    await s.exited;
    clearTimeout(timer);
  }

  /** Starts (or resumes) server `i` on its data dir and ports, and waits until it serves. */
  async start(i: number): Promise<void> {
    const s = this.server(i);
    if (this.isRunning(i)) {
      if (!s.suspended) return;
      s.child?.kill("SIGCONT");
      s.suspended = false;
    } else {
      this.launch(i);
    }
    await this.waitServing(i);
  }

  /** The last `lines` lines server `i` printed. */
  logTail(i: number, lines = 60): string {
    const s = this.server(i);
    return `--- ZooKeeper server ${s.id} (port ${s.clientPort}), last lines ---\n${s.lines.slice(-lines).join("\n")}`;
  }

  /** Every server's log tail, for failure messages. */
  logs(lines = 40): string {
    return this.servers.map((_, i) => this.logTail(i, lines)).join("\n");
  }

  /**
   * Ends a session from a second connection: reconnects with its id and password and closes it, until a
   * probe finds it gone. The session's own client is disconnected by the server and finds the session
   * expired when it reconnects.
   */
  async expireSession(sessionId: bigint, password: Buffer): Promise<void> {
    let last: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      const i = this.servers.findIndex((_, j) => this.isRunning(j) && !this.server(j).suspended);
      const port = this.server(i).clientPort;
      try {
        await sessionRequest(this.host, port, sessionId, password, true);
        if ((await sessionRequest(this.host, port, sessionId, password, false)) === "expired") return;
        last = new Error("the session is still alive");
      } catch (e) {
        last = e;
      }
      await sleep(100);
    }
    throw new Error(`could not expire session 0x${sessionId.toString(16)}: ${String(last)}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (let i = 0; i < this.servers.length; i++) await this.stop(i, "SIGKILL");
    rmSync(this.root, { recursive: true, force: true });
    roots.delete(this.root);
  }
}

/**
 * Speaks just enough of ZooKeeper's protocol to take over a session: a ConnectRequest with the session's
 * id and password, and with `close` a CloseSession request sent with it. "expired" when the server says
 * the session is gone, "alive" when it accepted the connection, "closed" when it closed the connection
 * without answering (as it does after processing the close).
 */
function sessionRequest(
  host: string,
  port: number,
  sessionId: bigint,
  password: Buffer,
  close: boolean,
): Promise<"expired" | "alive" | "closed"> {
  const body = Buffer.alloc(4 + 8 + 4 + 8 + 4 + password.length + 1);
  let o = 0;
  o = body.writeInt32BE(0, o); // protocolVersion
  o = body.writeBigInt64BE(0n, o); // lastZxidSeen
  o = body.writeInt32BE(30_000, o); // timeOut
  o = body.writeBigInt64BE(BigInt.asIntN(64, sessionId), o);
  o = body.writeInt32BE(password.length, o);
  o += password.copy(body, o);
  body.writeUInt8(0, o); // readOnly
  const frame = Buffer.alloc(4);
  frame.writeInt32BE(body.length);
  const closeRequest = Buffer.alloc(12);
  closeRequest.writeInt32BE(8, 0);
  closeRequest.writeInt32BE(1, 4); // xid
  closeRequest.writeInt32BE(-11, 8); // OpCode.closeSession
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${host}:${port} within 5000 ms`));
    }, 5000);
    const finish = (result: "expired" | "alive" | "closed"): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    socket.on("connect", () =>
      socket.write(Buffer.concat(close ? [frame, body, closeRequest] : [frame, body])),
    );
    socket.on("data", (d: Buffer) => {
      received = Buffer.concat([received, d]);
      // The ConnectResponse: protocolVersion, timeOut (0 when the session is gone), ...
      if (received.length < 12) return;
      if (received.readInt32BE(8) <= 0) finish("expired");
      else if (!close) finish("alive");
    });
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("close", () => finish("closed"));
  });
}
