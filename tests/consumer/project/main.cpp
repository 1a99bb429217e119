#include <granula/granula.hpp>
#include <granula/io/io.hpp>

#include <cstdio>

int main() {
    granula::host_image<unsigned char> img(5, 1);
    for (int x = 0; x < 5; ++x) img.view()(0, x) = static_cast<unsigned char>(10 * x);
    const auto out = granula::erosion(img.view(), granula::structuring_element::hline(3));
    const bool ok = out.view()(0, 0) == 0 && out.view()(0, 2) == 10 && out.view()(0, 4) == 30;
    std::printf("consumer: erosion %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
