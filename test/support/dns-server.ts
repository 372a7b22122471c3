import dns2 from "dns2";

/**
 * A real DNS server (UDP, npm dns2) on a loopback port that answers A and
 * AAAA questions for the names it is given, with TTLs, and can change its
 * answers at any time. Tests point s3x at it with --dns-server (or
 * Resolver#setServers), so no test query ever reaches the machine's resolver.
 */
export interface TestDnsServer {
  /** "127.0.0.1:PORT", for --dns-server and Resolver#setServers. */
  server: string;
  port: number;
  /** Replace the answer for `name` (an empty list answers NXDOMAIN-like: no records). */
  setAnswer(name: string, addresses: readonly string[], ttlSeconds?: number): void;
  /** Questions received per name, to check re-resolution happened. */
  queries(name: string): number;
  close(): Promise<void>;
}

interface Answer {
  addresses: string[];
  ttl: number;
}

export async function startDnsServer(host = "127.0.0.1", port = 0): Promise<TestDnsServer> {
  const answers = new Map<string, Answer>();
  const counts = new Map<string, number>();
  const { Packet } = dns2;
  const server = dns2.createUDPServer((request, send) => {
    const response = Packet.createResponseFromRequest(request);
    for (const question of request.questions) {
      const name = question.name.toLowerCase();
      counts.set(name, (counts.get(name) ?? 0) + 1);
      const answer = answers.get(name);
      if (!answer) continue;
      const family = question.type === Packet.TYPE.A ? 4 : question.type === Packet.TYPE.AAAA ? 6 : 0;
      for (const address of answer.addresses) {
        if (family === 0 || (family === 6) !== address.includes(":")) continue;
        response.answers.push(Packet.createResourceFromQuestion(question, { ttl: answer.ttl, address }));
      }
    }
    void send(response);
  });
  await server.listen(port, host);
  const bound = server.address().port;
  return {
    server: `${host}:${bound}`,
    port: bound,
    setAnswer(name, addresses, ttlSeconds = 1) {
      answers.set(name.toLowerCase(), { addresses: [...addresses], ttl: ttlSeconds });
    },
    queries: (name) => counts.get(name.toLowerCase()) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
