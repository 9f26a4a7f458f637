#pragma once
#include <cstdint>
#include <string_view>

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) and the masked form
// TFRecord framing stores, so that a CRC of data that itself holds CRCs does
// not collide with them.
namespace wireup::train::tensorboard {

// crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(std::string_view data);
// ((crc >> 15) | (crc << 17)) + 0xa282ead8, in 32 bits.
std::uint32_t mask_crc(std::uint32_t crc);
inline std::uint32_t masked_crc32c(std::string_view data) { return mask_crc(crc32c(data)); }

}  // namespace wireup::train::tensorboard
