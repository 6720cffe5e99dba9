// cxx - C++ with known names for the demangler: a namespace, a class's
// const method, a function template and its instance, called in a loop for a
// number of seconds (argv[1]). Built without inlining, as the C workloads.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace shape {
struct Circle {
    double r;
    double area() const;
};

double Circle::area() const
{
    double a = 0;
    for (int i = 0; i < 200; i++)
        a += std::sqrt(r * r * 3.14159 + i);
    return a;
}

template <typename T> double total_area(const std::vector<T> &all)
{
    double sum = 0;
    for (const T &s : all)
        sum += s.area();
    return sum;
}
} // namespace shape

int main(int argc, char **argv)
{
    double secs = argc > 1 ? std::atof(argv[1]) : 1.0;
    std::vector<shape::Circle> all;
    for (int i = 0; i < 100; i++)
        all.push_back(shape::Circle{1.0 + i});
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
    volatile double sink = 0;
    while (std::chrono::steady_clock::now() < end)
        sink = sink + shape::total_area(all);
    return 0;
}
