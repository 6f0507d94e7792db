// SPDX-License-Identifier: Apache-2.0
// Choosing several devices for one search: comma lists, "all", and the refusals.
#include <catch2/catch.hpp>

#include "src/core/error.hpp"
#include "src/device/device_set.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_device_set {

using namespace gemmtune;

namespace {

Device fake(int index, const std::string& type, const std::string& name,
            const std::string& driver = "1.0") {
  Device d;
  d.info.platform_index = 0;
  d.info.device_index = index;
  d.info.type = type;
  d.info.name = name;
  d.info.vendor = "V";
  d.info.driver_version = driver;
  return d;
}

std::vector<std::string> selectors(const std::vector<Device>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.info.selector());
  return out;
}

}  // namespace

TEST_CASE("several devices are named by a comma list or by all", "[device][device_set]") {
  const std::vector<Device> host = {fake(0, "cpu", "Host CPU"), fake(1, "gpu", "Card X"),
                                    fake(2, "gpu", "Card X"), fake(3, "gpu", "Card X")};
  CHECK(selectors(select_devices_from(host, "0:1,0:3")) == std::vector<std::string>{"0:1", "0:3"});
  // all: every device of the default device's type (a GPU where there is one).
  CHECK(selectors(select_devices_from(host, "all")) ==
        std::vector<std::string>{"0:1", "0:2", "0:3"});
  CHECK(selectors(select_devices_from(host, "ALL")).size() == 3);
  // One selector is one device, as before; none is the default device (the first GPU).
  CHECK(selectors(select_devices_from(host, "0:2")) == std::vector<std::string>{"0:2"});
  CHECK(selectors(select_devices_from(host, "")) == std::vector<std::string>{"0:1"});
  CHECK(selectors(select_devices_from(host, "default")) == std::vector<std::string>{"0:1"});
  CHECK(names_several_devices("0:1,0:2"));
  CHECK(names_several_devices("all"));
  CHECK_FALSE(names_several_devices("0:1"));
  // Without a GPU, all is every CPU.
  const std::vector<Device> cpus = {fake(0, "cpu", "C"), fake(1, "cpu", "C")};
  CHECK(select_devices_from(cpus, "all").size() == 2);
}

TEST_CASE("devices of two models, a device twice or an empty item are refused",
          "[device][device_set]") {
  const std::vector<Device> host = {fake(0, "gpu", "Card X"), fake(1, "gpu", "Card Y"),
                                    fake(2, "gpu", "Card X", "2.0"), fake(3, "gpu", "Card X")};
  CHECK_THROWS_WITH(select_devices_from(host, "0:0,0:1"),
                    Catch::Contains("one search measures devices of one model only"));
  // The same model under another driver compiles and times differently: refused too.
  CHECK_THROWS_WITH(select_devices_from(host, "0:0,0:2"), Catch::Contains("driver 2.0"));
  CHECK_THROWS_WITH(select_devices_from(host, "0:0,0:0"), Catch::Contains("0:0 twice"));
  CHECK_THROWS_WITH(select_devices_from(host, "0:0,,0:3"), Catch::Contains("empty item"));
  CHECK_THROWS_WITH(select_devices_from(host, "all"), Catch::Contains("one model only"));
  CHECK(select_devices_from(host, "0:0,0:3").size() == 2);
}

}  // namespace gemmtune_tests::src_device_test_device_set
