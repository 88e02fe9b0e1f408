import type { ReactNode } from "react";
import "./globals.css";
import { QueryProvider } from "@/components/query-provider";

// Rendered per request, every page and the 404 included: each response's CSP carries a
// fresh script nonce, which a page prerendered at build time could not have.
export const dynamic = "force-dynamic";

export const metadata = { title: "Mesh", description: "Fleet manager" };
export const viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased">
        <QueryProvider>{children}</QueryProvider>
      </body>
    </html>
  );
}
