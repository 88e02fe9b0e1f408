import type { ReactNode } from "react";
import "./globals.css";
import { QueryProvider } from "@/components/query-provider";

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
