// Preset buttons (pressed state announced) and a custom range of UTC days with its own Apply, so
// that typing a date does not fire a request per keystroke.
import { useId, useState, type FormEvent } from 'react';
import { customRangeProblem, PRESETS, utcDay, type Range } from './range.ts';

export function RangePicker({ value, onChange }: { value: Range; onChange: (range: Range) => void }) {
  const [customOpen, setCustomOpen] = useState(value.kind === 'custom');
  const today = utcDay(Date.now());
  const [from, setFrom] = useState(value.kind === 'custom' ? value.from : utcDay(Date.now() - 6 * 86_400_000));
  const [to, setTo] = useState(value.kind === 'custom' ? value.to : today);
  const [problem, setProblem] = useState<string | null>(null);
  const id = useId();

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const found = customRangeProblem(from, to);
    setProblem(found);
    if (!found) onChange({ kind: 'custom', from, to });
  };

  return (
    <div className="traffic-range">
      <div role="group" aria-label="Date range" className="actions">
        {PRESETS.map((preset) => (
          <button
            key={preset.id}
            type="button"
            aria-pressed={value.kind === 'preset' && value.preset === preset.id}
            className={value.kind === 'preset' && value.preset === preset.id ? 'button-primary' : undefined}
            onClick={() => {
              setCustomOpen(false);
              onChange({ kind: 'preset', preset: preset.id });
            }}
          >
            {preset.label}
          </button>
        ))}
        <button
          type="button"
          aria-expanded={customOpen}
          aria-controls={`${id}-custom`}
          className={value.kind === 'custom' ? 'button-primary' : undefined}
          onClick={() => setCustomOpen((open) => !open)}
        >
          Custom range
        </button>
      </div>
      {customOpen && (
        <form id={`${id}-custom`} className="filters traffic-custom" onSubmit={apply} aria-label="Custom date range" noValidate>
          <div className="field">
            <label htmlFor={`${id}-from`}>First day (UTC)</label>
            <input id={`${id}-from`} type="date" value={from} max={today} required onChange={(e) => setFrom(e.target.value)} aria-describedby={problem ? `${id}-problem` : undefined} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-to`}>Last day (UTC)</label>
            <input id={`${id}-to`} type="date" value={to} required onChange={(e) => setTo(e.target.value)} aria-describedby={problem ? `${id}-problem` : undefined} />
          </div>
          <button type="submit" className="button-primary">
            Apply
          </button>
          {problem && (
            <p id={`${id}-problem`} className="traffic-problem" role="alert">
              {problem}
            </p>
          )}
        </form>
      )}
    </div>
  );
}
