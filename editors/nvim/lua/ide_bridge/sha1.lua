-- SHA-1 (for the WebSocket Sec-WebSocket-Accept check) on LuaJIT's `bit`.
local bit = require("bit")
local band, bor, bxor, bnot = bit.band, bit.bor, bit.bxor, bit.bnot
local rol, tobit = bit.rol, bit.tobit

local M = {}

local function u32(x)
  x = tobit(x)
  if x < 0 then
    x = x + 4294967296
  end
  return x
end

--- The 20-byte binary SHA-1 digest of `msg`.
function M.binary(msg)
  local h0, h1, h2, h3, h4 = tobit(0x67452301), tobit(0xEFCDAB89), tobit(0x98BADCFE), tobit(0x10325476), tobit(0xC3D2E1F0)
  local ml = #msg * 8
  msg = msg .. "\128" .. string.rep("\0", (55 - #msg) % 64)
  -- 64-bit big-endian length (messages here are far below 2^32 bits).
  local hi = math.floor(ml / 4294967296)
  local lo = ml % 4294967296
  msg = msg
    .. string.char(
      math.floor(hi / 16777216) % 256,
      math.floor(hi / 65536) % 256,
      math.floor(hi / 256) % 256,
      hi % 256,
      math.floor(lo / 16777216) % 256,
      math.floor(lo / 65536) % 256,
      math.floor(lo / 256) % 256,
      lo % 256
    )
  assert(#msg % 64 == 0)
  local w = {}
  for chunk = 1, #msg, 64 do
    for i = 0, 15 do
      local a, b, c, d = msg:byte(chunk + i * 4, chunk + i * 4 + 3)
      w[i] = bor(bit.lshift(a, 24), bit.lshift(b, 16), bit.lshift(c, 8), d)
    end
    for i = 16, 79 do
      w[i] = rol(bxor(w[i - 3], w[i - 8], w[i - 14], w[i - 16]), 1)
    end
    local a, b, c, d, e = h0, h1, h2, h3, h4
    for i = 0, 79 do
      local f, k
      if i < 20 then
        f, k = bor(band(b, c), band(bnot(b), d)), 0x5A827999
      elseif i < 40 then
        f, k = bxor(b, c, d), 0x6ED9EBA1
      elseif i < 60 then
        f, k = bor(band(b, c), band(b, d), band(c, d)), 0x8F1BBCDC
      else
        f, k = bxor(b, c, d), 0xCA62C1D6
      end
      local temp = tobit(rol(a, 5) + f + e + k + w[i])
      e, d, c, b, a = d, c, rol(b, 30), a, temp
    end
    h0, h1, h2, h3, h4 = tobit(h0 + a), tobit(h1 + b), tobit(h2 + c), tobit(h3 + d), tobit(h4 + e)
  end
  local out = {}
  for _, h in ipairs({ h0, h1, h2, h3, h4 }) do
    local v = u32(h)
    out[#out + 1] = string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256, math.floor(v / 256) % 256, v % 256)
  end
  return table.concat(out)
end

--- The hex SHA-1 digest of `msg`.
function M.hex(msg)
  return (M.binary(msg):gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

return M
