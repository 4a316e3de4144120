package dev.holdfast.shop.config;

import jakarta.servlet.DispatcherType;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Roles CUSTOMER and ADMIN, form login, CSRF on (Spring Security's default, not switched off) for the
 * pages; the Actuator endpoints in a chain of their own, with HTTP Basic.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

    /**
     * {@code /actuator/**}: health for everyone; Holdfast's endpoint for admins only, reads
     * ({@code GET}) and force-releases ({@code DELETE}) alike, as the admin locks page; anything else
     * refused. HTTP Basic, no session. CSRF is off in this chain only: its one state-changing
     * operation is a {@code DELETE}, which no HTML form can send and another site's script can send
     * only after a CORS preflight that this application never grants, and no session cookie is ever
     * issued here.
     */
    @Bean
    @Order(1)
    SecurityFilterChain actuatorSecurity(HttpSecurity http) throws Exception {
        // tag::actuator-security[]
        return http
                .securityMatcher(EndpointRequest.toAnyEndpoint())
                .authorizeHttpRequests(a -> a
                        .requestMatchers(EndpointRequest.to("health")).permitAll()
                        .requestMatchers(HttpMethod.GET, "/actuator/holdfast", "/actuator/holdfast/**").hasRole("ADMIN")
                        .requestMatchers(HttpMethod.DELETE, "/actuator/holdfast/**").hasRole("ADMIN")
                        .anyRequest().denyAll())
                .httpBasic(Customizer.withDefaults())
                .sessionManagement(m -> m.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .csrf(c -> c.disable())   // see above: DELETE only, no session cookie
                .build();
        // end::actuator-security[]
    }

    @Bean
    @Order(2)
    SecurityFilterChain shopSecurity(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.dispatcherTypeMatchers(DispatcherType.FORWARD, DispatcherType.ERROR)
                        .permitAll()
                        .requestMatchers(
                                "/",
                                "/login",
                                "/denied",
                                "/error",
                                "/css/**",
                                "/js/**",
                                "/favicon.ico",
                                "/language",
                                "/zone")
                        .permitAll()
                        .requestMatchers("/admin/**")
                        .hasRole("ADMIN")
                        .requestMatchers("/my/**")
                        .hasRole("CUSTOMER")
                        .anyRequest()
                        .authenticated())
                .formLogin(
                        f -> f.loginPage("/login").defaultSuccessUrl("/", false).permitAll())
                .logout(l -> l.logoutSuccessUrl("/login?logout"))
                .exceptionHandling(e -> e.accessDeniedPage("/denied"))
                .build();
    }

    @Bean
    PasswordEncoder passwordEncoder() {
        return PasswordEncoderFactories.createDelegatingPasswordEncoder();
    }

    @Bean
    UserDetailsService users(PasswordEncoder encoder) {
        InMemoryUserDetailsManager users = new InMemoryUserDetailsManager();
        for (DemoUsers.DemoUser u : DemoUsers.ALL) {
            users.createUser(User.withUsername(u.username())
                    .password(encoder.encode(u.password()))
                    .roles(u.role())
                    .build());
        }
        return users;
    }
}
