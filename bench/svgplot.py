"""A line chart as a standalone SVG file, with no plotting library (the benchmark machines have
none): axes with ticks, one polyline per series, a legend. Used by the benchmark drivers for
pictures that read better than a table (sync progress over time)."""

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def _ticks(hi, n=5):
    """Round tick values from 0 to at least hi."""
    if hi <= 0:
        return [0, 1]
    raw = hi / n
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 10 ** -len(str(int(1 / raw)))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    ticks, v = [], 0.0
    while v < hi + step * 0.999:
        ticks.append(round(v, 10))
        v += step
    return ticks


def line_chart(path, series, title, xlabel, ylabel, width=760, height=420):
    """series: list of (name, [(x, y), ...]). Writes an SVG file to path."""
    left, right, top, bottom = 70, 200, 40, 55
    pw, ph = width - left - right, height - top - bottom
    xs = [x for _, pts in series for x, _ in pts] or [1]
    ys = [y for _, pts in series for _, y in pts] or [1]
    xt, yt = _ticks(max(xs)), _ticks(max(ys))
    xmax, ymax = xt[-1] or 1, yt[-1] or 1

    def px(x):
        return left + x / xmax * pw

    def py(y):
        return top + ph - y / ymax * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left + pw / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>']
    for t in xt:
        out.append(f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{top + ph}" '
                   f'stroke="#e5e5e5"/>')
        out.append(f'<text x="{px(t):.1f}" y="{top + ph + 16}" text-anchor="middle">{t:g}</text>')
    for t in yt:
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + pw}" y2="{py(t):.1f}" '
                   f'stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
               f'stroke="black"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 12}" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text x="16" y="{top + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + ph / 2})">{ylabel}</text>')
    for i, (name, pts) in enumerate(series):
        color = COLORS[i % len(COLORS)]
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{coords}" fill="none" stroke="{color}" '
                   f'stroke-width="2"/>')
        ly = top + 10 + i * 20
        out.append(f'<line x1="{left + pw + 12}" y1="{ly}" x2="{left + pw + 36}" y2="{ly}" '
                   f'stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{left + pw + 42}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
