// The time series of requests by action, drawn by uPlot on a canvas. The canvas says nothing to a
// screen reader, so the container is an image with a text summary (the data table next to it has
// the numbers). Styles reach the DOM only through the CSSOM (uPlot's own, and ours via classes),
// which the page's CSP allows; no <style> or style attribute is ever written as HTML.
import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { ACTION_COLOUR_VAR, ACTION_LABEL, ACTIONS, type Analytics } from './actions.ts';

const HEIGHT = 260;

/** The value of a theme variable now (the canvas cannot use var()). */
const cssVar = (name: string): string => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';

/** Re-renders when the system switches between light and dark. */
function useColourScheme(): string {
  const query = '(prefers-color-scheme: dark)';
  const [scheme, setScheme] = useState(() => (matchMedia(query).matches ? 'dark' : 'light'));
  useEffect(() => {
    const media = matchMedia(query);
    const changed = () => setScheme(media.matches ? 'dark' : 'light');
    media.addEventListener('change', changed);
    return () => media.removeEventListener('change', changed);
  }, []);
  return scheme;
}

export function summaryOf(data: Analytics): string {
  const parts = ACTIONS.map((action) => `${data.totals[action]} ${ACTION_LABEL[action].toLowerCase()}`);
  return `Requests by action per ${data.granularity}, ${data.timeseries.length} points: ${data.totals.requests} requests in total, ${parts.join(', ')}.`;
}

export function RequestsChart({ data }: { data: Analytics }) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useColourScheme();

  useEffect(() => {
    const target = box.current;
    if (!target) return;
    const fg = cssVar('--fg-muted');
    const grid = cssVar('--border');
    // Hollow points in the page's own background (uPlot's default white glares in the dark theme).
    const background = cssVar('--bg');
    const axis: uPlot.Axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const plotted: uPlot.AlignedData = [
      data.timeseries.map((point) => Date.parse(point.start) / 1000),
      ...ACTIONS.map((action) => data.timeseries.map((point) => point[action])),
    ];
    const chart = new uPlot(
      {
        width: Math.max(target.clientWidth, 200),
        height: HEIGHT,
        // Our own legend (below) is real text with the theme's colours; uPlot's would be a second one.
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [axis, { ...axis, size: 50 }],
        series: [{ label: 'Time' }, ...ACTIONS.map((action) => ({ label: ACTION_LABEL[action], stroke: cssVar(ACTION_COLOUR_VAR[action]), width: 2, points: { show: data.timeseries.length <= 48, fill: background } }))],
      },
      plotted,
      target,
    );
    // Follows the container's width: the page is usable from 390 px up.
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(target.clientWidth, 200), height: HEIGHT }));
    resize.observe(target);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [data, scheme]);

  return (
    <figure className="traffic-figure">
      <div ref={box} className="chart traffic-chart" role="img" aria-label={summaryOf(data)} data-testid="requests-chart" />
      <figcaption>
        <ul className="traffic-legend" aria-label="Legend">
          {ACTIONS.map((action) => (
            <li key={action}>
              <span className={`traffic-swatch traffic-swatch-${action}`} aria-hidden="true" />
              {ACTION_LABEL[action]} ({action})
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
