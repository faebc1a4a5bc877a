// What the proxy lets through.
export const dynamic = "force-dynamic";

export function GET() {
  return new Response("behind the proxy\n");
}
