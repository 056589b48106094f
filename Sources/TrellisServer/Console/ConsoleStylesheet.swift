/// The console's one stylesheet, served at ``ConsolePage/stylesheetPath``: a single column that
/// fits a phone (390 px) and widens on a desktop, system fonts, colours with enough contrast in
/// light and dark schemes, a visible focus ring, and wide tables scrolling in their own box
/// instead of the page. No inline style anywhere, so the policy allows styles from this file alone.
enum ConsoleStylesheet {
    static let text = """
        :root { color-scheme: light dark; --fg: #1b1f23; --bg: #ffffff; --muted: #57606a; --line: #d0d7de;
          --accent: #0a5c36; --bad: #a40e26; --good: #0a5c36; --panel: #f6f8fa; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --line: #30363d; --accent: #56d364;
            --bad: #ff7b72; --good: #56d364; --panel: #161b22; }
        }
        * { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
        body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
          color: var(--fg); background: var(--bg); }
        a { color: var(--accent); }
        a:focus-visible, [tabindex]:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -999px; top: 0; padding: .5rem; background: var(--bg); }
        .skip:focus { left: .5rem; }
        header { border-bottom: 1px solid var(--line); padding: .5rem 1rem; background: var(--panel); }
        .brand { margin: 0 0 .25rem; font-weight: 700; }
        nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
        nav a { display: inline-block; padding: .5rem 0; min-height: 44px; }
        nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
        main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
        h1 { font-size: 1.6rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
        h2 { font-size: 1.25rem; margin: 1.5rem 0 .5rem; overflow-wrap: anywhere; }
        footer { padding: 1rem; color: var(--muted); font-size: .875rem; border-top: 1px solid var(--line); }
        .scroll { overflow-x: auto; max-width: 100%; margin: 0 0 1rem; }
        table { border-collapse: collapse; min-width: 100%; }
        caption { text-align: left; font-weight: 600; padding: .25rem 0; }
        th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-bottom: 1px solid var(--line);
          overflow-wrap: break-word; }
        thead th { border-bottom: 2px solid var(--line); white-space: nowrap; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        .ok { color: var(--good); font-weight: 600; }
        .bad { color: var(--bad); font-weight: 600; }
        .empty, .note { color: var(--muted); }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
        dl.facts dt { font-weight: 600; }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        ul.links { padding-left: 1.25rem; }
        ul.links li { margin: .35rem 0; }
        pre.payload { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 40rem;
          font: .875rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
        .chart { width: 100%; height: auto; max-width: 44rem; display: block; margin: 0 0 1rem; }
        .chart .axis { stroke: var(--muted); stroke-width: 1; }
        .chart .grid { stroke: var(--line); stroke-width: 1; }
        .chart .moisture { fill: none; stroke: #1f6feb; stroke-width: 2; }
        .chart .temperature { fill: none; stroke: #d4631a; stroke-width: 2; stroke-dasharray: 6 3; }
        .chart text { fill: var(--muted); font-size: 14px; }
        .legend { display: flex; flex-wrap: wrap; gap: 1rem; margin: 0 0 .5rem; padding: 0; list-style: none; }
        .legend .swatch-moisture { color: #1f6feb; font-weight: 700; }
        .legend .swatch-temperature { color: #d4631a; font-weight: 700; }
        .spans { display: flex; flex-wrap: wrap; gap: .5rem 1rem; list-style: none; padding: 0; }
        .spans a { display: inline-block; padding: .5rem .75rem; border: 1px solid var(--line); border-radius: 4px; }
        .spans a[aria-current="page"] { font-weight: 700; border-color: var(--accent); }
        @media (min-width: 48rem) { header { display: flex; align-items: baseline; gap: 2rem; }
          .brand { margin: 0; } main { padding: 1.5rem 2rem; } }

        """
}
