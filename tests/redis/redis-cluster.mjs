// A Redis Cluster of three masters (Debian's redis-server in cluster mode) on 127.0.0.1 and
// throwaway ports, for one test file: `redis-cli --cluster create` assigns the 16384 slots,
// and `start` resolves once every node reports the cluster as ok. `stop()` ends the nodes and
// removes their files.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { RedisServer } from "./redis-server.mjs";

const run = promisify(execFile);

export class RedisCluster {
  nodes = [];
  #dir = null;

  static async start(size = 3) {
    const cluster = new RedisCluster();
    cluster.#dir = mkdtempSync(join(tmpdir(), "tollgate-cluster-"));
    cluster.nodes = await Promise.all(
      Array.from({ length: size }, (_, i) =>
        RedisServer.start(["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${i}.conf`, "--cluster-node-timeout", "2000"], cluster.#dir),
      ),
    );
    const addresses = cluster.nodes.map((n) => `127.0.0.1:${n.port}`);
    await run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"], { timeout: 30_000 });
    const end = Date.now() + 20_000;
    for (;;) {
      const infos = await Promise.all(cluster.nodes.map((n) => run("redis-cli", ["-p", String(n.port), "CLUSTER", "INFO"]).then((r) => r.stdout)));
      if (infos.every((i) => i.includes("cluster_state:ok"))) break;
      if (Date.now() > end) throw new Error(`cluster not ok after 20 s:\n${infos.join("\n")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return cluster;
  }

  /** What clients start from. */
  get rootNodes() {
    return this.nodes.map((n) => ({ host: "127.0.0.1", port: n.port }));
  }

  async stop() {
    await Promise.all(this.nodes.map((n) => n.stop()));
    if (this.#dir !== null) rmSync(this.#dir, { recursive: true, force: true });
  }
}
