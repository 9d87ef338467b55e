import { describe, expect, it } from "vitest";
import { percentile, wilsonInterval } from "./statistics.js";

describe("wilsonInterval", () => {
  it("matches published 95% intervals", () => {
    // Reference values: e.g. R's binom::binom.wilson / statsmodels proportion_confint(method="wilson").
    const [low, high] = wilsonInterval(8, 10);
    expect(low).toBeCloseTo(0.4901625, 6);
    expect(high).toBeCloseTo(0.9433178, 6);
    const [lowHalf, highHalf] = wilsonInterval(50, 100);
    expect(lowHalf).toBeCloseTo(0.4038315, 6);
    expect(highHalf).toBeCloseTo(0.5961685, 6);
  });

  it("is exact at the edges and stays inside [0, 1]", () => {
    const [zeroLow, zeroHigh] = wilsonInterval(0, 10);
    expect(zeroLow).toBe(0);
    expect(zeroHigh).toBeCloseTo(0.2775328, 6);
    const [allLow, allHigh] = wilsonInterval(10, 10);
    expect(allLow).toBeCloseTo(0.7224672, 6);
    expect(allHigh).toBe(1);
    expect(wilsonInterval(1, 1)[1]).toBe(1);
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
  });

  it("narrows with more trials and widens with a larger z", () => {
    const width = ([low, high]: [number, number]) => high - low;
    expect(width(wilsonInterval(30, 60))).toBeLessThan(width(wilsonInterval(5, 10)));
    expect(width(wilsonInterval(5, 10, 2.576))).toBeGreaterThan(width(wilsonInterval(5, 10)));
  });

  it("refuses impossible counts", () => {
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, 0)).toThrow(RangeError);
  });
});

describe("percentile", () => {
  it("interpolates linearly between ranks, like numpy's default", () => {
    const values = [15, 20, 35, 40, 50];
    expect(percentile(values, 0)).toBe(15);
    expect(percentile(values, 50)).toBe(35);
    expect(percentile(values, 100)).toBe(50);
    expect(percentile(values, 40)).toBe(29); // numpy.percentile([15,20,35,40,50], 40) == 29.0
    expect(percentile(values, 95)).toBeCloseTo(48, 10); // numpy: 48.0
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4], 95)).toBeCloseTo(3.85, 10);
  });

  it("does not care about order, ignores non-finite values, and is null for none", () => {
    expect(percentile([50, 15, 40, 20, 35], 50)).toBe(35);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([3, Number.NaN, 1], 50)).toBe(2);
    expect(percentile([], 50)).toBeNull();
    expect(percentile([Number.NaN], 50)).toBeNull();
  });

  it("takes p from 0 to 100", () => {
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });

  it("does not reorder its input", () => {
    const values = [3, 1, 2];
    percentile(values, 50);
    expect(values).toEqual([3, 1, 2]);
  });
});
