/**
 * Where a chat turn's time goes: a V8 CPU profile of the turn-overhead bench's timed turns
 * (`bench/turn-overhead.bench.ts`: the real core on fake-indexeddb, no LLM, no query embedding).
 *
 * Usage: `npx tsx scripts/profile-turn.ts [size=10000] [turns=20] [counter=estimator] [lock=off] [runs=2]`.
 * Prints, for the samples inside the timed spans (send → prompt ready) only: ms per turn by
 * function (self time, top 40) and by inclusive time for the functions named in `INCLUSIVE`
 * (any frame of that name on the stack counts once per sample). Sampling interval 100 µs;
 * the profiler slows the turn, so compare shares, not absolute times, with the bench.
 */
import { Session } from 'node:inspector/promises';
import { prepareDatabase, runTurns, type CounterName, type LockMode } from '../bench/turn-overhead.bench';

const [size = '10000', turns = '20', counter = 'estimator', lock = 'off', runs = '2'] = process.argv.slice(2);

/** Function names whose inclusive time is reported. */
const INCLUSIVE = (process.env.PROFILE_INCLUSIVE ?? '').split(',').filter(Boolean);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const db = await prepareDatabase(Number(size), lock as LockMode);
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
const spans: [bigint, bigint][] = [];
await session.post('Profiler.start');
let timedTurns = 0;
for (let run = 0; run < Number(runs); run++) {
  const samples = await runTurns(db, counter as CounterName, Number(turns), run, (a, b) => spans.push([a, b]));
  timedTurns += samples.wall.length;
  console.error(`run ${run}: wall p50 ${median(samples.wall).toFixed(1)} ms`);
}
const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
await db.delete();

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
/** Self time by function key (name, file, line). */
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
/** Top-down tree: inclusive time per call path (merged by function and file), printed with PROFILE_TREE. */
interface TreeNode {
  us: number;
  children: Map<string, TreeNode>;
}
const root: TreeNode = { us: 0, children: new Map() };
const frameKey = (f: ProfileNode['callFrame']) => `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}`;
let inside = 0;
// Sample times are µs on the same monotonic clock as process.hrtime (CLOCK_MONOTONIC): compared with the spans directly.
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i]!;
  const dt = profile.timeDeltas[i + 1] ?? 0;
  const atNs = BigInt(Math.round(t * 1000));
  if (!spans.some(([a, b]) => atNs >= a && atNs <= b)) continue;
  inside += dt;
  const node = byId.get(profile.samples[i]!)!;
  const key = `${frameKey(node.callFrame)}:${node.callFrame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  const path: string[] = [];
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id)!.callFrame;
    if (INCLUSIVE.includes(f.functionName) && !seen.has(f.functionName)) {
      seen.add(f.functionName);
      inclusive.set(f.functionName, (inclusive.get(f.functionName) ?? 0) + dt);
    }
    if (f.functionName !== '(root)') path.push(frameKey(f));
  }
  let at = root;
  at.us += dt;
  for (const frame of path.reverse()) {
    let next = at.children.get(frame);
    if (!next) at.children.set(frame, (next = { us: 0, children: new Map() }));
    next.us += dt;
    at = next;
  }
}
const perTurn = (us: number) => (us / 1000 / timedTurns).toFixed(2);
console.log(`${timedTurns} timed turns, ${perTurn(inside)} ms sampled per turn`);
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${perTurn(us).padStart(7)}  ${key}`);
for (const name of INCLUSIVE) console.log(`inclusive ${perTurn(inclusive.get(name) ?? 0).padStart(7)}  ${name}`);

if (process.env.PROFILE_TREE) {
  const depth = Number(process.env.PROFILE_DEPTH ?? 40);
  const min = Number(process.env.PROFILE_MIN_MS ?? 0.3) * 1000 * timedTurns;
  const print = (node: TreeNode, indent: number) => {
    if (indent > depth) return;
    for (const [key, child] of [...node.children].sort((a, b) => b[1].us - a[1].us)) {
      if (child.us < min) continue;
      console.log(`${perTurn(child.us).padStart(7)} ${' '.repeat(indent)}${key}`);
      print(child, indent + 1);
    }
  };
  print(root, 0);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}
