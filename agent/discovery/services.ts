/**
 * What runs on this host: processes, listening sockets with their owners, and
 * running systemd units, read straight from /proc and systemctl.
 *
 * Unprivileged, whatever cannot be read is skipped (other users' fds, exe links); in
 * a container without systemd the unit list is empty. Every loop is capped, so a
 * host with thousands of processes or a database with 100k fds costs bounded work.
 * Not systeminformation: its `processes()` forks one `cat` per process (~100
 * processes, ~700 ms here) and `networkConnections()` shells out to netstat.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { endianness } from "node:os";
import { basename } from "node:path";
import type { ServiceFacts } from "../types.ts";

type ProcessFact = ServiceFacts["processes"][number];
type ListeningFact = ServiceFacts["listening"][number];

const MAX_PROCESSES = 4096;
const MAX_COMMAND_CHARS = 512;
const MAX_LISTENING = 4096;
/** fd links read in all, across processes, to find socket owners. */
const MAX_FD_LINKS = 100_000;
const MAX_UNITS = 2048;
const SYSTEMCTL_TIMEOUT_MS = 5000;
/** The kernel truncates `comm` to 15 bytes. */
const COMM_LENGTH = 15;
const LITTLE_ENDIAN = endianness() === "LE";

export async function serviceFacts(): Promise<ServiceFacts> {
  const units = runningUnits(); // runs while /proc is read
  const pids = processIds();
  const users = userNames();
  const processes = pids.slice(0, MAX_PROCESSES).flatMap((pid) => readProcess(pid, users) ?? []);
  return { processes, listening: listening(pids, processes), units: await units };
}

/** Numeric /proc entries, ascending, so a parent is met before its forks. */
function processIds(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => a - b);
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** uid → name from /etc/passwd; users only NSS knows (LDAP…) stay numeric. */
function userNames(): Map<number, string> {
  const users = new Map<number, string>();
  for (const line of (read("/etc/passwd") ?? "").split("\n")) {
    const [name, , uid] = line.split(":");
    if (name && uid && /^\d+$/.test(uid)) users.set(Number(uid), name);
  }
  return users;
}

/** Null for kernel threads and zombies (empty cmdline) and processes gone meanwhile. */
function readProcess(pid: number, users: Map<number, string>): ProcessFact | null {
  const argv = (read(`/proc/${pid}/cmdline`) ?? "").split("\0").filter(Boolean);
  if (argv.length === 0) return null;
  return {
    pid,
    name: processName(pid, argv[0]!),
    command: argv.join(" ").slice(0, MAX_COMMAND_CHARS),
    user: processUser(pid, users),
  };
}

/**
 * The name `ps` and `ss` show: `comm`, which the kernel takes from the executed file,
 * so `redis-server` (a symlink to redis-check-rdb) and a script run by its shebang
 * keep their own names where the exe link would give the target or the interpreter.
 * The kernel truncates it to 15 bytes; a truncated name is completed from the exe
 * link or argv[0].
 */
function processName(pid: number, argv0: string): string {
  const comm = read(`/proc/${pid}/comm`)?.replace(/\n$/, "");
  if (comm && comm.length < COMM_LENGTH) return comm;
  const full = [exeName(pid), basename(argv0)].find((name) => name && (!comm || name.startsWith(comm)));
  return full ?? comm ?? "";
}

function exeName(pid: number): string | null {
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ""));
  } catch {
    return null; // another user's process, or a kernel thread
  }
}

/** The real uid's name, or the uid itself when /etc/passwd does not know it. */
function processUser(pid: number, users: Map<number, string>): string | null {
  const uid = /^Uid:\s+(\d+)/m.exec(read(`/proc/${pid}/status`) ?? "")?.[1];
  return uid === undefined ? null : (users.get(Number(uid)) ?? uid);
}

/** Listening sockets of this network namespace with their owners, by protocol, port, address. */
function listening(pids: number[], processes: ProcessFact[]): ListeningFact[] {
  const sockets = listeningSockets();
  const owners = socketOwners(new Set(sockets.keys()), pids);
  const names = new Map(processes.map((p) => [p.pid, p.name]));
  const seen = new Set<string>();
  const result: ListeningFact[] = [];
  for (const [inode, socket] of sockets) {
    const key = `${socket.protocol} ${socket.address} ${socket.port}`;
    if (seen.has(key)) continue; // SO_REUSEPORT siblings
    seen.add(key);
    const pid = owners.get(inode) ?? null;
    const process = pid === null ? null : (names.get(pid) ?? processName(pid, ""));
    result.push({ ...socket, pid, process });
  }
  return result.sort((a, b) => a.protocol.localeCompare(b.protocol) || a.port - b.port || a.address.localeCompare(b.address));
}

type Socket = Omit<ListeningFact, "pid" | "process">;

/** Socket inode → socket, from /proc/net/{tcp,tcp6,udp,udp6}. */
function listeningSockets(): Map<number, Socket> {
  const sockets = new Map<number, Socket>();
  for (const [file, protocol] of [
    ["tcp", "tcp"],
    ["tcp6", "tcp"],
    ["udp", "udp"],
    ["udp6", "udp"],
  ] as const) {
    for (const line of (read(`/proc/net/${file}`) ?? "").split("\n").slice(1)) {
      if (sockets.size >= MAX_LISTENING) return sockets;
      const socket = parseSocketLine(line, protocol);
      if (socket) sockets.set(socket.inode, socket.socket);
    }
  }
  return sockets;
}

/**
 * One /proc/net line: `sl local rem st tx:rx tr:when retrnsmt uid timeout inode …`.
 * TCP listens in state 0A; a UDP socket "listens" when unconnected (state 07, no peer port).
 */
function parseSocketLine(line: string, protocol: "tcp" | "udp"): { inode: number; socket: Socket } | null {
  const fields = line.trim().split(/\s+/);
  const [local, remote, state, inode] = [fields[1], fields[2], fields[3], fields[9]];
  if (!local || !remote || !inode) return null;
  const listens = protocol === "tcp" ? state === "0A" : state === "07" && remote.endsWith(":0000");
  if (!listens || inode === "0") return null;
  const [addressHex, portHex] = local.split(":") as [string, string];
  return { inode: Number(inode), socket: { port: parseInt(portHex, 16), protocol, address: decodeAddress(addressHex) } };
}

/** The kernel prints addresses as 32-bit words in host byte order: 8 hex digits for IPv4, 32 for IPv6. */
function decodeAddress(hex: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < hex.length; i += 8) {
    const word = parseInt(hex.slice(i, i + 8), 16);
    const bigEndian = [word >>> 24, (word >>> 16) & 255, (word >>> 8) & 255, word & 255];
    bytes.push(...(LITTLE_ENDIAN ? bigEndian.reverse() : bigEndian));
  }
  if (bytes.length === 4) return bytes.join(".");
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1); // the canonical compressed form
}

/**
 * Socket inode → pid, by reading /proc/<pid>/fd links in pid order (so a master
 * process wins over the workers it forked); stops once every inode is found or the
 * link budget is spent.
 */
function socketOwners(inodes: Set<number>, pids: number[]): Map<number, number> {
  const owners = new Map<number, number>();
  let budget = MAX_FD_LINKS;
  for (const pid of pids) {
    if (owners.size === inodes.size || budget <= 0) break;
    const fds = socketInodes(pid, budget);
    budget -= fds.read;
    for (const inode of fds.inodes) if (inodes.has(inode) && !owners.has(inode)) owners.set(inode, pid);
  }
  return owners;
}

/**
 * Inodes of the process's sockets, reading at most `budget` links. A denied link ends
 * the process early, as the rest would be denied too: pid 1 of some sandboxes lists
 * hundreds of fds and denies each one, even to root.
 */
function socketInodes(pid: number, budget: number): { inodes: number[]; read: number } {
  const inodes: number[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`).slice(0, budget);
  } catch {
    return { inodes, read: 0 }; // another user's process, or gone
  }
  for (const fd of fds) {
    let link: string;
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue; // closed meanwhile
      break;
    }
    const match = /^socket:\[(\d+)\]$/.exec(link);
    if (match) inodes.push(Number(match[1]));
  }
  return { inodes, read: fds.length };
}

/** Running service units; empty unless systemd is PID 1 (its own test: /run/systemd/system). */
async function runningUnits(): Promise<string[]> {
  if (!existsSync("/run/systemd/system") || !Bun.which("systemctl")) return [];
  try {
    const child = Bun.spawn(["systemctl", "list-units", "--type=service", "--state=running", "--no-legend", "--plain", "--no-pager"], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
      timeout: SYSTEMCTL_TIMEOUT_MS,
    });
    const [output, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    if (code !== 0) return [];
    return output
      .split("\n")
      .map((line) => line.trim().split(/\s+/)[0] ?? "")
      .filter((unit) => unit.endsWith(".service"))
      .slice(0, MAX_UNITS);
  } catch {
    return [];
  }
}
