// What the middleware lets through.
export const dynamic = "force-dynamic";

export function GET() {
  return new Response("behind the middleware\n");
}
