package dev.holdfast.architecture;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import dev.holdfast.architecture.Reactor.Kind;
import dev.holdfast.architecture.Reactor.Module;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The architecture rules over the main classes of every module: no cycle between packages or between
 * the classes of a package, internal packages used only as declared, benchmarks and examples on the
 * public API. The lists of allowed breaches below are empty; a breach fails the build.
 */
class ArchitectureTest {

    /** Packages ("module: package") in a cycle of packages; none is, and none may be. */
    static final Set<String> ALLOWED_IN_PACKAGE_CYCLES = Set.of();

    /** Classes in a cycle of classes inside their package; none is, and none may be. */
    static final Set<String> ALLOWED_IN_CLASS_CYCLES = Set.of();

    /** An internal package that modules of other kinds may use, and why. */
    record InternalApi(Set<Kind> usedBy, String why) {}

    /**
     * Internal packages that other modules may use: their declared internal API, each for the kinds of
     * module named. Any other internal package is for its own module only.
     */
    static final Map<String, InternalApi> DECLARED_INTERNAL_API = Map.of(
            "dev.holdfast.internal",
                    new InternalApi(
                            Set.of(Kind.LIBRARY), "argument checks shared by every module (see its package-info)"),
            "dev.holdfast.lease.internal",
                    new InternalApi(
                            Set.of(Kind.BENCHMARK), "the lease machinery, which benchmarks measure part by part"));

    /** Uses of another module's internal package outside the declared internal API, today. It may only shrink. */
    static final Set<String> ALLOWED_INTERNAL_USES = Set.of();

    /** Benchmark and example classes that reach library code beyond its public and declared internal API. */
    static final Set<String> ALLOWED_BEYOND_PUBLIC_API = Set.of();

    private final JavaClasses classes = Reactor.mainClasses();

    @Test
    void noCyclesBetweenPackages() {
        assertThat(cycleProblems(packageGraph(), ALLOWED_IN_PACKAGE_CYCLES, "ALLOWED_IN_PACKAGE_CYCLES"))
                .as("cycles between packages")
                .isEmpty();
    }

    @Test
    void noCyclesBetweenClassesInsideAPackage() {
        assertThat(cycleProblems(classGraphInsidePackages(), ALLOWED_IN_CLASS_CYCLES, "ALLOWED_IN_CLASS_CYCLES"))
                .as("cycles between classes inside a package")
                .isEmpty();
    }

    /** Each cycle with a member not allowed, and each allowed name that is in no cycle any more. */
    private static List<String> cycleProblems(Map<String, Set<String>> graph, Set<String> allowed, String listName) {
        Set<String> inCycles = new TreeSet<>();
        List<String> problems = new ArrayList<>();
        for (Set<String> component : stronglyConnected(graph)) {
            if (component.size() < 2) {
                continue;
            }
            inCycles.addAll(component);
            Set<String> notAllowed = new TreeSet<>(component);
            notAllowed.removeAll(allowed);
            if (!notAllowed.isEmpty()) {
                problems.add("a cycle: " + component + " (not in " + listName + ": " + notAllowed + ")");
            }
        }
        for (String a : new TreeSet<>(allowed)) {
            if (!inCycles.contains(a)) {
                problems.add(a + " is in no cycle any more: delete it from " + listName);
            }
        }
        return problems;
    }

    @Test
    void internalPackagesAreUsedByTheirOwnModuleOrThroughTheDeclaredInternalApi() {
        Set<String> uses = new TreeSet<>();
        for (JavaClass c : classes) {
            Optional<Module> from = Reactor.moduleOf(c);
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = Reactor.named(d.getTargetClass());
                Optional<Module> to = Reactor.moduleOf(target);
                if (to.isEmpty() || to.equals(from) || !Reactor.isInternalPackage(target.getPackageName())) {
                    continue;
                }
                boolean declared =
                        from.map(m -> isDeclaredFor(target, m.kind())).orElse(false);
                if (!declared) {
                    uses.add(Reactor.topLevelName(c) + " -> " + Reactor.topLevelName(target));
                }
            }
        }
        assertThat(problems(uses, ALLOWED_INTERNAL_USES, "ALLOWED_INTERNAL_USES"))
                .as("uses of another module's internal package")
                .isEmpty();
    }

    @Test
    void benchmarksAndExamplesUseOnlyThePublicApi() {
        Set<String> offenders = new TreeSet<>();
        Map<String, Set<String>> details = new TreeMap<>();
        for (JavaClass c : classes) {
            Optional<Module> from = Reactor.moduleOf(c);
            if (from.isEmpty() || from.get().kind() == Kind.LIBRARY) {
                continue;
            }
            String source = Reactor.topLevelName(c);
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = Reactor.named(d.getTargetClass());
                if (isLibrary(target)
                        && !Reactor.isPublicApi(target)
                        && !isDeclaredFor(target, from.get().kind())) {
                    offenders.add(source);
                    details.computeIfAbsent(source, k -> new TreeSet<>()).add("uses " + target.getName());
                }
            }
            for (JavaAccess<?> access : c.getAccessesFromSelf()) {
                JavaClass owner = Reactor.named(access.getTargetOwner());
                if (!isLibrary(owner)) {
                    continue;
                }
                Optional<? extends JavaMember> member = access.getTarget().resolveMember();
                if (member.isPresent()
                        && !member.get().getModifiers().contains(JavaModifier.PUBLIC)
                        && !member.get().getModifiers().contains(JavaModifier.PROTECTED)) {
                    offenders.add(source);
                    details.computeIfAbsent(source, k -> new TreeSet<>())
                            .add("uses " + member.get().getFullName());
                }
            }
        }
        List<String> problems = problems(offenders, ALLOWED_BEYOND_PUBLIC_API, "ALLOWED_BEYOND_PUBLIC_API");
        assertThat(problems)
                .as("benchmark and example classes beyond the public API; what they use: " + details)
                .isEmpty();
    }

    /**
     * EngineLeases: a LeaseService's own calls, which its builder's decorators wrap. It turns the internal rows and
     * refusals into the package's types through their package-private factories, so it cannot live in the internal
     * package, and nested it would take LeaseService.java past its size limit (LeaseSizeTest).
     */
    private static final Set<String> PACKAGE_PRIVATE_IN_LEASE = Set.of("EngineLeases");

    @Test
    void theLeasePackageListsOnlyPublicTypes() {
        List<String> hidden = new ArrayList<>();
        for (JavaClass c : classes) {
            if (c.getPackageName().equals("dev.holdfast.lease")
                    && c.isTopLevelClass()
                    && !c.getSimpleName().equals("package-info")
                    && !c.getModifiers().contains(JavaModifier.PUBLIC)
                    && !PACKAGE_PRIVATE_IN_LEASE.contains(c.getSimpleName())) {
                hidden.add(c.getName());
            }
        }
        assertThat(hidden)
                .as("package-private types in dev.holdfast.lease (they belong in its internal package)")
                .isEmpty();
    }

    private static boolean isDeclaredFor(JavaClass target, Kind user) {
        InternalApi api = DECLARED_INTERNAL_API.get(target.getPackageName());
        return api != null && api.usedBy().contains(user);
    }

    private static boolean isLibrary(JavaClass c) {
        return Reactor.moduleOf(c).map(m -> m.kind() == Kind.LIBRARY).orElse(false);
    }

    /** What is found and not allowed, and what is allowed and no longer found. */
    private static List<String> problems(Set<String> found, Set<String> allowed, String listName) {
        List<String> problems = new ArrayList<>();
        for (String f : found) {
            if (!allowed.contains(f)) {
                problems.add(f);
            }
        }
        for (String a : new TreeSet<>(allowed)) {
            if (!found.contains(a)) {
                problems.add(a + " is gone: delete it from " + listName);
            }
        }
        return problems;
    }

    /** The packages of each module ("module: package") and the packages of the reactor they depend on. */
    private Map<String, Set<String>> packageGraph() {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (JavaClass c : classes) {
            Optional<Module> module = Reactor.moduleOf(c);
            if (module.isEmpty()) {
                continue;
            }
            String from = module.get() + ": " + c.getPackageName();
            Set<String> edges = graph.computeIfAbsent(from, k -> new TreeSet<>());
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = Reactor.named(d.getTargetClass());
                Optional<Module> to = Reactor.moduleOf(target);
                String node = to.map(m -> m + ": " + target.getPackageName()).orElse(from);
                if (!node.equals(from)) {
                    edges.add(node);
                }
            }
        }
        return graph;
    }

    /** Top-level classes of dev.holdfast and the top-level classes of their own package they depend on. */
    private Map<String, Set<String>> classGraphInsidePackages() {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (JavaClass c : classes) {
            if (!c.getPackageName().startsWith("dev.holdfast")) {
                continue;
            }
            String from = Reactor.topLevelName(c);
            Set<String> edges = graph.computeIfAbsent(from, k -> new TreeSet<>());
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = Reactor.named(d.getTargetClass());
                String to = Reactor.topLevelName(target);
                if (target.getPackageName().equals(c.getPackageName())
                        && !to.equals(from)
                        && Reactor.moduleOf(target).isPresent()) {
                    edges.add(to);
                }
            }
        }
        return graph;
    }

    /** Tarjan's strongly connected components, each as a sorted set of names. */
    private static List<Set<String>> stronglyConnected(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<Set<String>> components = new ArrayList<>();
        int[] counter = {0};
        for (String v : graph.keySet()) {
            if (!index.containsKey(v)) {
                connect(v, graph, index, low, stack, onStack, components, counter);
            }
        }
        return components;
    }

    private static void connect(
            String v,
            Map<String, Set<String>> graph,
            Map<String, Integer> index,
            Map<String, Integer> low,
            Deque<String> stack,
            Set<String> onStack,
            List<Set<String>> components,
            int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]);
        counter[0]++;
        stack.push(v);
        onStack.add(v);
        for (String w : graph.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                connect(w, graph, index, low, stack, onStack, components, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            components.add(component);
        }
    }
}
