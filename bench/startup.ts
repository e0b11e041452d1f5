// bench:startup — what `import "lethe"` costs a process, beside `node -e 0` (issue 25, item 8).
//
// Runs, alternately so that a loaded machine slows each the same, N times each: `node -e 0`;
// `node --input-type=module -e "await import('<dist/index.js>')"` (the package's main entry, built);
// and the same with `zod` alone (what the root used to load for its config schema). Each child
// preloads a probe (-r, CommonJS: no ES loader for the baseline) that writes its own
// process.cpuUsage() (user + system, every thread, since start) as it exits; wall time is spawn to
// exit, seen from here. Reports medians, the ratio to `node -e 0` and the difference.
//
//   npm run bench:startup [-- --runs N --out FILE]   (builds first: it imports dist/)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RUNS = Number(opt("--runs") ?? 30);
const OUT = opt("--out") ?? resolve(ROOT, "bench/results/startup.json");
const ENTRY = join(ROOT, "dist/index.js");
if (!existsSync(ENTRY)) throw new Error("dist/index.js is missing: run `npm run build` first");

const dir = mkdtempSync(join(tmpdir(), "lethe-startup-"));
const probe = join(dir, "probe.cjs");
writeFileSync(probe, `process.on("exit", () => { const u = process.cpuUsage(); require("fs").writeSync(1, "\\n" + (u.user + u.system) + "\\n"); });\n`);

const VARIANTS: Record<string, string[]> = {
  "node -e 0": ["-r", probe, "-e", "0"],
  'import "lethe"': ["-r", probe, "--input-type=module", "-e", `await import(${JSON.stringify(pathToFileURL(ENTRY).href)});`],
  'import "zod"': ["-r", probe, "--input-type=module", "-e", `await import("zod");`],
};

/** One child: wall ms (spawn to exit) and the CPU ms it reported. */
function run(args: string[]): { wall: number; cpu: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8" });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${r.stderr}`);
  const cpu = Number(r.stdout.trim().split("\n").at(-1)) / 1000;
  return { wall, cpu };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const samples: Record<string, { wall: number[]; cpu: number[] }> = {};
for (const name of Object.keys(VARIANTS)) samples[name] = { wall: [], cpu: [] };
// One warm-up each (file cache), then the runs, interleaved.
for (const args of Object.values(VARIANTS)) run(args);
for (let i = 0; i < RUNS; i++) {
  for (const [name, args] of Object.entries(VARIANTS)) {
    const { wall, cpu } = run(args);
    samples[name]!.wall.push(wall);
    samples[name]!.cpu.push(cpu);
  }
}
rmSync(dir, { recursive: true, force: true });

const base = samples["node -e 0"]!;
const baseWall = median(base.wall);
const baseCpu = median(base.cpu);
const rows = Object.entries(samples).map(([name, s]) => {
  const wall = median(s.wall);
  const cpu = median(s.cpu);
  return { name, wallMs: +wall.toFixed(1), cpuMs: +cpu.toFixed(1), wallRatio: +(wall / baseWall).toFixed(2), cpuRatio: +(cpu / baseCpu).toFixed(2), wallOverMs: +(wall - baseWall).toFixed(1), cpuOverMs: +(cpu - baseCpu).toFixed(1) };
});

const machine = { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "?", loadavg1: +loadavg()[0]!.toFixed(2) };
console.log(`bench:startup — median of ${RUNS} runs each, interleaved; node ${machine.node}, ${machine.cpus} cores, load ${machine.loadavg1}`);
console.log(`${"".padEnd(16)}${"wall ms".padStart(9)}${"×".padStart(7)}${"+ms".padStart(8)}${"cpu ms".padStart(9)}${"×".padStart(7)}${"+ms".padStart(8)}`);
for (const r of rows) {
  console.log(`${r.name.padEnd(16)}${r.wallMs.toFixed(1).padStart(9)}${r.wallRatio.toFixed(2).padStart(7)}${r.wallOverMs.toFixed(1).padStart(8)}${r.cpuMs.toFixed(1).padStart(9)}${r.cpuRatio.toFixed(2).padStart(7)}${r.cpuOverMs.toFixed(1).padStart(8)}`);
}
writeFileSync(OUT, `${JSON.stringify({ runs: RUNS, machine, rows }, null, 2)}\n`);
console.log(`wrote ${OUT}`);
