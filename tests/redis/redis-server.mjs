// Starts Debian's redis-server for one test file on 127.0.0.1 and a throwaway port, without
// persistence; `stop()` ends it, `kill()` + `start()` simulate a crash and a restart (same
// port, empty: nothing is saved).
import { spawn } from "node:child_process";
import net from "node:net";

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export class RedisServer {
  port = 0;
  #proc = null;
  #extra = [];
  #cwd = undefined;
  #binary = "redis-server";

  /**
   * `extra`: more redis-server arguments (a cluster node's); `cwd`: where it writes files;
   * `binary`: the server to run (valkey-server takes the same arguments).
   */
  static async start(extra = [], cwd = undefined, binary = "redis-server") {
    // A port found free may be taken before the server binds it (by another test file's
    // server or a connection's local port): then another port, a few times.
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer();
      server.port = await freePort();
      server.#extra = extra;
      server.#cwd = cwd;
      server.#binary = binary;
      try {
        await server.start();
        return server;
      } catch (e) {
        if (attempt === 3 || !/address already in use/i.test(e.message)) throw e;
      }
    }
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port; resolves once it accepts connections (10 s at most). */
  start() {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...this.#extra];
    const proc = spawn(this.#binary, args, { stdio: ["ignore", "pipe", "pipe"], cwd: this.#cwd });
    this.#proc = proc;
    return new Promise((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`${this.#binary} did not start:\n${out}`)), 10_000);
      const ready = (chunk) => {
        out += chunk;
        if (out.includes("Ready to accept connections")) {
          clearTimeout(timer);
          proc.stdout.off("data", ready);
          proc.stdout.resume();
          resolve();
        }
      };
      proc.stdout.setEncoding("utf8").on("data", ready);
      proc.stderr.setEncoding("utf8").on("data", (c) => (out += c));
      proc.on("exit", (code) => {
        clearTimeout(timer);
        if (this.#proc === proc) this.#proc = null;
        reject(new Error(`redis-server exited (${code}):\n${out}`));
      });
    });
  }

  /** Ends the server abruptly (SIGKILL), as a crash would. */
  kill() {
    return this.#end("SIGKILL");
  }

  stop() {
    if (this.#proc !== null) this.#proc.kill("SIGCONT"); // a paused server cannot act on SIGTERM
    return this.#end("SIGTERM");
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause() {
    this.#proc?.kill("SIGSTOP");
  }

  /** Lets a paused server run again (SIGCONT); it answers what queued meanwhile. */
  resume() {
    this.#proc?.kill("SIGCONT");
  }

  #end(signal) {
    const proc = this.#proc;
    if (proc === null) return Promise.resolve();
    this.#proc = null;
    return new Promise((resolve) => {
      proc.once("exit", () => resolve());
      proc.kill(signal);
    });
  }
}
