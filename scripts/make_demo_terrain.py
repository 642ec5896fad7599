# Generates data/demo/stairs.obj and data/demo/slope.png, the demo terrain made for kinema.
# Usage: python3 scripts/make_demo_terrain.py data/demo
import struct, zlib, sys
out = sys.argv[1]

# Stairs: flat floor, then 5 steps of 0.15 m rise and 0.30 m run going up along +Z, then a
# landing. x from -1 to 2 (the demo walk goes along z at x ~ 0.6).
x0, x1 = -1.0, 2.0
rise, run, steps, z_start = 0.15, 0.30, 5, -0.9
zs = [-3.0] + [z_start + i * run for i in range(steps + 1)] + [3.5]
v, f = [], []
def quad(a, b, c, d):
    base = len(v)
    v.extend([a, b, c, d])
    f.append((base + 1, base + 2, base + 3, base + 4))
# treads: segment i between zs[i] and zs[i+1] at height h_i
for i in range(len(zs) - 1):
    h = rise * min(i, steps)
    za, zb = zs[i], zs[i + 1]
    quad((x0, h, za), (x0, h, zb), (x1, h, zb), (x1, h, za))  # facing +Y (counter-clockwise from above)
    if i + 1 < len(zs) - 1 and i < steps:
        hn = rise * (i + 1)
        quad((x0, h, zb), (x0, hn, zb), (x1, hn, zb), (x1, h, zb))  # riser facing -Z
with open(out + "/stairs.obj", "w") as o:
    o.write("# kinema demo terrain: a floor, then 5 steps (rise 0.15 m, run 0.30 m) up along +Z, the\n")
    o.write("# first riser at z = -0.9, the last step a landing at 0.75 m from z = 0.3 on. Metres, +Y\n# up. Made for kinema (same licence).\n")
    o.write("o stairs\n")
    for p in v:
        o.write("v %g %g %g\n" % p)
    for q in f:
        o.write("f %d %d %d %d\n" % q)

# Slope: 16-bit grayscale PNG, 81 x 121 px; with the default 0.05 m cells, centred, 1 m range it
# covers x -2..2, z -3..3: flat at 0 for z < -1, a ramp up to 0.25 m at z = 1, flat after.
w, hgt = 81, 121
rows = []
for r in range(hgt):
    z = -3 + r * 0.05
    t = min(1.0, max(0.0, (z + 1) / 2))
    val = int(round(0.25 * t * 65535))
    rows.append(b"\x00" + struct.pack(">H", val) * w)
raw = b"".join(rows)
def chunk(t, d):
    c = struct.pack(">I", len(d)) + t + d
    return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, hgt, 16, 0, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
open(out + "/slope.png", "wb").write(png)
