package dev.holdfast.shop.web;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.shop.config.DemoUsers;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;

@Controller
class HomeController {

    private final Dialect dialect;

    HomeController(Dialect dialect) {
        this.dialect = dialect;
    }

    @GetMapping("/")
    String home(Model model) {
        model.addAttribute("database", dialect.id());
        return "home";
    }

    @GetMapping("/login")
    String login(Model model) {
        model.addAttribute("demoUsers", DemoUsers.ALL);
        return "login";
    }
}
