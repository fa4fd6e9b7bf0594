/** The finder-pattern detector and the leads the scan follows (src/qr/finders.ts, src/qr/leads.ts), on rasters drawn here. */
import { describe, expect, it } from 'vitest';
import type { GrayRaster } from '../../src/pdf/engine/port.ts';
import { findFinderPatterns } from '../../src/qr/finders.ts';
import { leadsIn } from '../../src/qr/leads.ts';
import { textCode, type Code } from '../support/qr/qr-bills.ts';
import { blur, light } from '../support/qr/gray-image.ts';

/** A white raster with codes painted at (x, y) with `module` pixels a module (fractional sizes anti-aliased by area). */
function raster(
  width: number,
  height: number,
  codes: { code: Code; x: number; y: number; module: number }[],
): GrayRaster {
  const ink = new Float64Array(width * height);
  for (const { code, x, y, module } of codes) {
    const side = code.modules * module;
    for (const r of code.rects) {
      const [x0, y0, x1, y1] = [x + r.x * side, y + r.y * side, x + (r.x + r.w) * side, y + (r.y + r.h) * side];
      for (let py = Math.floor(y0); py < Math.ceil(y1); py++) {
        for (let px = Math.floor(x0); px < Math.ceil(x1); px++) {
          const cover = (Math.min(px + 1, x1) - Math.max(px, x0)) * (Math.min(py + 1, y1) - Math.max(py, y0));
          ink[py * width + px] = Math.min(1, ink[py * width + px]! + (r.white ? -cover : cover));
        }
      }
    }
  }
  return { width, height, data: Uint8Array.from(ink, (v) => 255 - 255 * Math.max(0, v)) };
}

const CODE = textCode('https://example.com/invoices/2026-001?pay=online&amount=1949.75'); // version 5, 37 modules

/** The centres of a code's three finder patterns, 3.5 modules in from its corners. */
const centres = (x: number, y: number, module: number, modules = CODE.modules) => [
  { x: x + 3.5 * module, y: y + 3.5 * module },
  { x: x + (modules - 3.5) * module, y: y + 3.5 * module },
  { x: x + 3.5 * module, y: y + (modules - 3.5) * module },
];

describe('findFinderPatterns', () => {
  it.each([1.8, 2, 2.6, 4, 7])(
    'finds the three finder patterns of a code at %d pixels a module, with their module size',
    (module) => {
      const found = findFinderPatterns(raster(300, 300, [{ code: CODE, x: 20.3, y: 31.7, module }]));
      for (const c of centres(20.3, 31.7, module)) {
        expect(
          found.some(
            (f) =>
              Math.abs(f.x - c.x) <= 1.5 && Math.abs(f.y - c.y) <= 1.5 && Math.abs(f.module - module) < module * 0.3,
          ),
          `${c.x},${c.y}`,
        ).toBe(true);
      }
    },
  );

  it('finds them under uneven light, blur and noise (a photo)', () => {
    const page = raster(400, 400, [{ code: CODE, x: 100, y: 120, module: 4 }]);
    const photo = light(blur(page, 1, 2), { bright: 1, dim: 0.5, noise: 20, seed: 4 });
    expect(findFinderPatterns(photo).length).toBeGreaterThanOrEqual(3);
  });

  it('finds none on a blank page or on text-like stripes', () => {
    expect(findFinderPatterns({ width: 200, height: 200, data: new Uint8Array(200 * 200).fill(250) })).toEqual([]);
    const stripes = new Uint8Array(300 * 300).fill(255);
    for (let y = 0; y < 300; y++)
      if (y % 12 < 7) for (let x = 20; x < 280; x++) if ((x * 7 + y) % 9 < 4) stripes[y * 300 + x] = 30;
    expect(findFinderPatterns({ width: 300, height: 300, data: stripes })).toEqual([]);
  });
});

describe('leadsIn', () => {
  const page = raster(600, 400, [
    { code: CODE, x: 40, y: 40, module: 2 },
    { code: CODE, x: 350, y: 200, module: 4 },
  ]);
  const box = (x: number, y: number, side: number) => ({ x: x / 600, y: y / 400, w: side / 600, h: side / 400 });
  /** A read code at that box (its corners and level do not matter to leads). */
  const code = (x: number, y: number, side: number) => {
    const b = box(x, y, side);
    const corner = { x: b.x, y: b.y };
    const corners = { topLeft: corner, topRight: corner, bottomLeft: corner, bottomRight: corner };
    return { bytes: new Uint8Array(), box: b, corners, ecLevel: 'M' };
  };

  it('leads to a code no reading explains, with a box around all of it', () => {
    const leads = leadsIn(page, { codes: [code(350, 200, 148)], unreadable: [] }, { finders: true });
    expect(leads).toHaveLength(1);
    const [lead] = leads;
    expect(lead!.x).toBeLessThanOrEqual(40);
    expect(lead!.y).toBeLessThanOrEqual(40);
    expect(lead!.x + lead!.w).toBeGreaterThanOrEqual(40 + 74);
    expect(lead!.y + lead!.h).toBeGreaterThanOrEqual(40 + 74);
    expect(lead!.module).toBeCloseTo(2, 0);
  });

  it('has none when every code was read, and leads to codes zxing located but could not read', () => {
    const read = {
      codes: [code(40, 40, 74), code(350, 200, 148)],
      unreadable: [],
    };
    expect(leadsIn(page, read, { finders: true })).toEqual([]);
    const outline = { x: 0.1, y: 0.1, w: 0.2, h: 0.3 };
    const leads = leadsIn(page, { codes: read.codes, unreadable: [outline] }, { finders: false });
    expect(leads).toHaveLength(1);
    expect(leads[0]!.anchor).toEqual({ x: 0.2 * 600, y: 0.25 * 400 });
  });
});
